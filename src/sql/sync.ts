// Apply or verify, the SQL kinds' sync: a verification of what this process applied is answered from
// the server's catalogue of the period (one read per server pool and period, src/external/snapshot.ts);
// only what it shows as different is read back and written on its own, by the kind's statements.
import { verifyBySnapshot } from "../external/index.ts";
import type { SqlKind, SqlObject } from "./backend.ts";
import type { SqlDeps } from "./deps.ts";
import type { Catalogue, SqlServer } from "./statements/index.ts";

/**
 * A verification of what this process applied (`known`) is answered from the server's catalogue of the
 * period; only what it shows as different is read back and written on its own.
 */
export async function applyOnServer<O extends SqlObject, S>(
  kind: SqlKind<O, S>,
  deps: SqlDeps,
  server: SqlServer,
  object: O,
  spec: S,
  known: boolean,
): Promise<{ detail: string; verifiedAt?: number }> {
  const listed = kind.listed;
  if (known && listed) {
    const check = {
      parts: ["catalogue"] as const,
      compare: ({ catalogue }: { catalogue: Catalogue }, s: S) => {
        const detail = listed(catalogue, s);
        return { matches: detail !== undefined, detail };
      },
    };
    const { answer, startedAt } = await verifyBySnapshot(deps.catalogues, server, check, spec, {
      now: deps.clock.monotonic(),
      periodMs: deps.settings.verificationPeriodMs,
    });
    if (answer.detail !== undefined) return { detail: answer.detail, verifiedAt: startedAt };
  }
  const applied = await kind.apply({ ...deps, server }, object, spec);
  if (applied.changed.length > 0) {
    const { namespace, name } = object.metadata;
    deps.logger.info(
      { kind: kind.kind.kind, namespace, name, changed: applied.changed },
      known ? "drift: repaired on the server" : "declared on the server",
    );
  }
  return { detail: applied.message };
}
