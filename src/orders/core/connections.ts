// Who still uses an account, as its backend answers: the sweep of a superseded generation waits while
// the broker (or the SQL server) lists sessions of its user, up to a bounded hold.

/** Who still uses an account, as the backend answers: a count, or why it cannot tell (no secret in it). */
export type ConnectionCount =
  { readonly known: true; readonly count: number } | { readonly known: false; readonly reason: string };
