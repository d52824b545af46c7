// The order of execution (seed 003): plugins wrap the reconcile, so entry runs custom, default, then
// mandatory, each group in its configured order, and exit runs the reverse: mandatory, default, custom,
// each group backwards. The mandatory plugins are always the closest to the reconcile.

export const groups = ["mandatory", "default", "custom"] as const;
export type Group = (typeof groups)[number];

export type Grouped<T> = Readonly<Record<Group, readonly T[]>>;

export function entryOrder<T>(plugins: Grouped<T>): { group: Group; plugin: T }[] {
  return (["custom", "default", "mandatory"] as const).flatMap((group) =>
    plugins[group].map((plugin) => ({ group, plugin })),
  );
}

export function exitOrder<T>(plugins: Grouped<T>): { group: Group; plugin: T }[] {
  return (["mandatory", "default", "custom"] as const).flatMap((group) =>
    [...plugins[group]].reverse().map((plugin) => ({ group, plugin })),
  );
}
