// Kubernetes' time format, through date-fns: metav1.Time is RFC 3339 in UTC with whole seconds.
import { UTCDate } from "@date-fns/utc";
import { formatRFC3339 } from "date-fns/formatRFC3339";

/** RFC 3339 in UTC with whole seconds, as Kubernetes writes metav1.Time: 2026-01-01T00:00:00Z. */
export function rfc3339(time: Date | number): string {
  // A UTCDate reads its calendar fields in UTC, so date-fns prints "Z" whatever the process's TZ is.
  return formatRFC3339(new UTCDate(time instanceof Date ? time.getTime() : time), { fractionDigits: 0 });
}
