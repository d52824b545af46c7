// Deep freezing, for objects many readers share: a write to one throws (an ES module is strict) instead
// of changing what the other readers see.

export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
