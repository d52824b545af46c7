// Label selectors of the equality-based form Kubernetes accepts (`a`, `!a`, `a=b`, `a==b`, `a!=b`,
// comma-separated): matching a set of labels, and whether one selector selects a subset of another's
// objects, so that the port can answer a narrower list from a broader cache.

type Requirement =
  { key: string; op: "exists" | "absent" } | { key: string; op: "equals" | "differs"; value: string };

export function parseSelector(selector: string): Requirement[] {
  return selector
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part): Requirement => {
      const differs = part.indexOf("!=");
      if (differs > 0)
        return { key: part.slice(0, differs).trim(), op: "differs", value: part.slice(differs + 2).trim() };
      const equals = part.indexOf("=");
      if (equals > 0) {
        const value = part.slice(part[equals + 1] === "=" ? equals + 2 : equals + 1).trim();
        return { key: part.slice(0, equals).trim(), op: "equals", value };
      }
      if (part.startsWith("!")) return { key: part.slice(1).trim(), op: "absent" };
      return { key: part, op: "exists" };
    });
}

function satisfies(requirement: Requirement, labels: Record<string, string>): boolean {
  const value = labels[requirement.key];
  switch (requirement.op) {
    case "exists":
      return value !== undefined;
    case "absent":
      return value === undefined;
    case "equals":
      return value === requirement.value;
    case "differs":
      return value !== requirement.value;
  }
}

export function matchesSelector(selector: string, labels: Record<string, string> | undefined): boolean {
  return parseSelector(selector).every((r) => satisfies(r, labels ?? {}));
}

/**
 * True when every object `narrow` selects is also selected by `broad`: each of broad's requirements is
 * implied by one of narrow's.
 */
export function selectorCovers(broad: string, narrow: string): boolean {
  const wanted = parseSelector(narrow);
  return parseSelector(broad).every((b) =>
    wanted.some((n) => {
      if (n.key !== b.key) return false;
      if (b.op === n.op)
        return (
          b.op === "exists" || b.op === "absent" || ("value" in b && "value" in n && b.value === n.value)
        );
      if (b.op === "exists") return n.op === "equals";
      if (b.op === "differs") return n.op === "equals" && "value" in n && n.value !== b.value;
      return false;
    }),
  );
}
