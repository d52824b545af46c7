// A topology object's fields as an informer's cache holds them, before any schema has looked at them:
// what the watches ask of every cached object when a labelled Secret or a User changes.

/** An object's fields as a cache holds them. */
export type RawFields = Readonly<Record<string, unknown>>;

/** `value` as fields, or undefined when it is not an object. */
export function fieldsOf(value: unknown): RawFields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as RawFields)
    : undefined;
}

/** The `name` of a reference such as `{ name: "creds" }`, when it is a non-empty string. */
export function referencedName(value: unknown): string | undefined {
  const name = fieldsOf(value)?.["name"];
  return typeof name === "string" && name !== "" ? name : undefined;
}
