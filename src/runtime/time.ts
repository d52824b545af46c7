import { formatRFC3339 } from "date-fns";

// date-fns formats in the process's local time zone: formatRFC3339 alone prints e.g. "+02:00" where TZ
// is not UTC. This Date reads its calendar fields in UTC and has no offset, so that date-fns prints
// the UTC time with "Z" whatever TZ is. It serves formatting only: its setters stay local.
class UtcFields extends Date {
  override getFullYear(): number {
    return this.getUTCFullYear();
  }
  override getMonth(): number {
    return this.getUTCMonth();
  }
  override getDate(): number {
    return this.getUTCDate();
  }
  override getDay(): number {
    return this.getUTCDay();
  }
  override getHours(): number {
    return this.getUTCHours();
  }
  override getMinutes(): number {
    return this.getUTCMinutes();
  }
  override getSeconds(): number {
    return this.getUTCSeconds();
  }
  override getMilliseconds(): number {
    return this.getUTCMilliseconds();
  }
  override getTimezoneOffset(): number {
    return 0;
  }
}

const utc = (value: Date | number | string) => new UtcFields(value);

/** RFC 3339 in UTC with whole seconds, as Kubernetes writes metav1.Time: 2026-01-01T00:00:00Z. */
export function rfc3339(time: Date | number): string {
  return formatRFC3339(time, { in: utc, fractionDigits: 0 });
}
