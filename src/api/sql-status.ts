// How the SQL kinds (seed 002) report readiness, shared by the controller that writes it and the
// orders that read it (a MariaDBDatabase order's children): the Ready condition's reasons, and
// whether an object's Ready is True for its current generation.

export const SqlReason = {
  /** The server holds what the spec asks for. */
  Reconciled: "Reconciled",
  /** A refused field, a missing dependency, a server out of reach or a refusal; the message says which. */
  ReconcileError: "ReconcileError",
  /**
   * The Connection's Secret name is taken by an object it does not own, or the schema or account of
   * the object's name on the server was not created under its claim (src/api/sql-claim.ts).
   */
  NotOwned: "NotOwned",
  /**
   * Beyond upstream: the object needs Secrets in a namespace --secret-namespaces (the chart's
   * rbac.secretNamespaces) leaves out; nothing is asked for there and nothing is declared.
   */
  SecretsOutOfReach: "SecretsOutOfReach",
  /**
   * Beyond upstream: the server's password validation refused a User's password; the message names
   * the policy (the plugins, strict_password_validation). A new password is needed, not the same again.
   */
  PasswordRefused: "PasswordRefused",
} as const;

interface WithReady {
  metadata: { generation?: number | undefined };
  status?:
    | {
        conditions?:
          | {
              type: string;
              status: string;
              reason: string;
              message: string;
              observedGeneration?: number | undefined;
            }[]
          | undefined;
      }
    | undefined;
}

export type SqlReadiness =
  { ready: true; message: string } | { ready: false; reason: string; message: string };

/** Ready True and observed at the object's generation: what `kubectl wait --for=condition=Ready` waits for. */
export function sqlReadiness(object: WithReady): SqlReadiness {
  const condition = object.status?.conditions?.find((c) => c.type === "Ready");
  if (!condition) return { ready: false, reason: "", message: "no Ready condition yet" };
  const current =
    condition.observedGeneration === undefined || condition.observedGeneration === object.metadata.generation;
  if (condition.status === "True" && current) return { ready: true, message: condition.message };
  return {
    ready: false,
    reason: condition.reason,
    message: current ? condition.message : "the Ready condition is of an earlier generation",
  };
}
