// The managed MariaDB: the ControlPlane's MariaDB and its credentials Secret, read on the management
// cluster through the port (from the caches where they hold them) and judged by the server gate. The
// administrator's password is read only to check that it is there.
import { mariaDBKind, MariaDBSchema, secretKind } from "../../api/index.ts";
import type { KubeObject } from "../../runtime/port/kube-rest.ts";
import type { Kube } from "../../runtime/port/kube.ts";
import { apiErrorText } from "../core/errors.ts";
import type { ControlPlaneView, GateResult } from "../core/gates.ts";
import { databaseGate, serverGate, serverReadError, type ManagedDatabase } from "./backend-gates.ts";

export async function managedDatabase(
  kube: Kube,
  cp: ControlPlaneView,
): Promise<GateResult<ManagedDatabase>> {
  const declared = databaseGate(cp);
  if (!declared.open) return declared;
  const { mariadb, secret: secretKey } = declared.value;
  const what = `MariaDB ${mariadb.namespace}/${mariadb.name}`;
  let raw: unknown;
  try {
    raw = await kube.get(mariaDBKind, mariadb);
  } catch (error) {
    return { open: false, gate: serverReadError(what, apiErrorText(error)) };
  }
  const parsed = raw === undefined ? undefined : MariaDBSchema.safeParse(raw);
  if (parsed && !parsed.success) {
    return { open: false, gate: serverReadError(what, "it does not match its schema") };
  }
  let secret: KubeObject | undefined;
  try {
    secret = await kube.get(secretKind, secretKey);
  } catch (error) {
    const which = `the credentials Secret ${secretKey.namespace}/${secretKey.name}`;
    return { open: false, gate: serverReadError(which, apiErrorText(error)) };
  }
  return serverGate({
    declared: declared.value,
    view: parsed?.data,
    secret: secret ? { data: secret["data"] as Record<string, string> | undefined } : undefined,
  });
}
