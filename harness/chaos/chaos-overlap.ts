// Which rotations and sweeps were under way while a fault lasted: each one's span runs from when it was
// due (the status's nextRotation or previousPasswordDeleteAt) until the status showed it done.
export interface Span {
  kind: string;
  /** Epoch milliseconds. */
  start: number;
  end: number;
}

/** What the run saw of one order's status, poll by poll. */
export interface StatusTrack {
  generation?: number;
  previous?: number | undefined;
  rotationDue?: number | undefined;
  sweepDue?: number | undefined;
  rotations: Span[];
  sweeps: Span[];
}

const intersect = (a: Span, b: Span) => a.start <= b.end && b.start <= a.end;

/** The rotations and the sweeps, over every order, whose span meets some fault's span. */
export function overlaps(
  tracks: readonly StatusTrack[],
  faults: readonly Span[],
): { rotation: number; sweep: number } {
  const under = (spans: Span[]) => spans.filter((s) => faults.some((f) => intersect(s, f))).length;
  return {
    rotation: tracks.reduce((n, t) => n + under(t.rotations), 0),
    sweep: tracks.reduce((n, t) => n + under(t.sweeps), 0),
  };
}
