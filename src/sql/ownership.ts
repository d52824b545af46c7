// "Is this resource mine?", decided by its mariaDbRef (or a Connection's maxScaleRef) before anything
// else: a resource the controller does not serve gets no status, no finalizer and no statement, so
// another controller can own it. The fields that only upstream's operator honours are judged after.

/** Which references the controller serves: all, none, or the listed `name` / `namespace/name`. */
export type RefSelection =
  { serve: "all" } | { serve: "none" } | { serve: "names"; names: readonly string[] };

export interface Reference {
  name?: string | undefined;
  namespace?: string | undefined;
}

export type Ownership = { decision: "served" } | { decision: "declined"; reason: string };

/** `all`, `none` or `names:a,ns/b`, as the sql-mariadb-refs setting reads. */
export function refSelection(text: string): RefSelection {
  if (text === "all" || text === "none") return { serve: text };
  return { serve: "names", names: text.slice("names:".length).split(",") };
}

export function decideOwnership(
  selection: RefSelection,
  ref: Reference | undefined,
  namespace: string,
): Ownership {
  if (selection.serve === "all") return { decision: "served" };
  if (selection.serve === "none") return { decision: "declined", reason: "no MariaDB reference is served" };
  const name = ref?.name ?? "";
  const where = `${ref?.namespace || namespace}/${name}`;
  return name && (selection.names.includes(name) || selection.names.includes(where))
    ? { decision: "served" }
    : { decision: "declined", reason: `MariaDB ${where} is not in the served list` };
}
