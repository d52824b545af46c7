// What upstream's messaging-topology-operator names, so that an object moves between its operator and
// this controller unchanged: the finalizer (src/rabbitmq/finalizer.ts), and the
// conditions it writes (a Ready condition, and PasswordSynced on a User) with their reasons. An empty
// message is left out of the status (src/topology/backend.ts).
import { FAILED_CREATE_OR_UPDATE } from "../api/contracts.ts";
import type { DesiredCondition } from "../runtime/base/conditions.ts";

export const Reason = {
  SuccessfulCreateOrUpdate: "SuccessfulCreateOrUpdate",
  FailedCreateOrUpdate: FAILED_CREATE_OR_UPDATE,
  /** Beyond upstream: the broker refused to delete what a deleted object declared. */
  FailedDelete: "FailedDelete",
  InvalidSpec: "InvalidSpec",
  SuccessfulPasswordSync: "SuccessfulPasswordSync",
  FailedPasswordSync: "FailedPasswordSync",
  /** Beyond upstream: a gatekeeper plugin refused the object at the entry of its pass. */
  GatekeeperRejected: "GatekeeperRejected",
  /** Beyond upstream: --secret-namespaces leaves out a namespace whose Secrets the object needs. */
  SecretsOutOfReach: "SecretsOutOfReach",
} as const;

export const ready = (): DesiredCondition => ({
  type: "Ready",
  status: "True",
  reason: Reason.SuccessfulCreateOrUpdate,
  message: "",
});

/** Ready False: FailedCreateOrUpdate unless `reason` says otherwise (GatekeeperRejected, SecretsOutOfReach). */
export const notReady = (
  message: string,
  reason: string = Reason.FailedCreateOrUpdate,
): DesiredCondition => ({ type: "Ready", status: "False", reason, message });

/** Beyond upstream: why a deleted object is still there (e.g. a quorum queue refuses if-empty). */
export const notDeleted = (message: string): DesiredCondition => ({
  type: "Ready",
  status: "False",
  reason: Reason.FailedDelete,
  message,
});

export const passwordSynced = (): DesiredCondition => ({
  type: "PasswordSynced",
  status: "True",
  reason: Reason.SuccessfulPasswordSync,
  message: "",
});

export const passwordNotSynced = (message: string): DesiredCondition => ({
  type: "PasswordSynced",
  status: "False",
  reason: Reason.FailedPasswordSync,
  message,
});
