// The copies plugins receive: a validating plugin gets a deeply frozen one (an ES module runs in strict
// mode, so a write to it throws), a mutating plugin a private one it may change.

export function copyOf<T>(value: T): T {
  return structuredClone(value);
}

export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
