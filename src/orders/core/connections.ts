// Who still uses an account: the sweep of a superseded generation waits, up to a bounded hold, while the
// broker (or the SQL server) lists sessions of its user, while its login records show a login since the
// switch, or while a pod that reads the delivered Secret runs from before the switch.

/** Who still uses an account, as the backend answers: a count, or why it cannot tell (no secret in it). */
export type ConnectionCount =
  { readonly known: true; readonly count: number } | { readonly known: false; readonly reason: string };

/** The successful logins of an account the backend recorded (counters without times), or why it cannot tell. */
export type LoginCount =
  { readonly known: true; readonly succeeded: number } | { readonly known: false; readonly reason: string };

/** What says a superseded user is still in use, as the sweep weighs it. */
export interface UseEvidence {
  /** Its sessions now. */
  readonly consumers: ConnectionCount;
  /**
   * Its logins since the switch; absent when none were read at the switch (the backend keeps no
   * records); a reason when they were, but cannot be read now (the sweep cannot tell, as for sessions).
   */
  readonly loginsSinceSwitch?: number | { readonly unknown: string } | undefined;
  /** Pods that read the delivered Secret and were created before the switch (namespace/name). */
  readonly podsBeforeSwitch?: readonly string[] | undefined;
}

/** Whether the evidence holds the sweep: a session, or the backend cannot tell, a login since the switch, an old pod. */
export function inUse(evidence: UseEvidence): boolean {
  const { consumers } = evidence;
  return (
    !consumers.known ||
    consumers.count > 0 ||
    typeof evidence.loginsSinceSwitch === "object" ||
    (evidence.loginsSinceSwitch ?? 0) > 0 ||
    (evidence.podsBeforeSwitch?.length ?? 0) > 0
  );
}
