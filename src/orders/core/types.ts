// The order core's plain types that many of its modules share: a condition's content and the types of
// the Events its transitions make. A leaf: it imports nothing from its siblings, so that a module naming one of these types
// never pulls in the module that makes them.
export type ConditionStatus = "True" | "False" | "Unknown";

/** A condition's content before it gets its times and generation. */
export interface ConditionState {
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** The type of a Kubernetes Event. */
export type EventType = "Normal" | "Warning";

/** The event a False condition's transition makes: Normal for a wait, none for a transient failure. */
export type EventTypes = Readonly<Record<string, EventType | "none">>;
