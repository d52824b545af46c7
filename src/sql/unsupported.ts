// Seed 002's refused fields: accepted by the CRDs (a resource written for upstream's mariadb-operator
// applies unchanged) but set to something the built-in controller would not honour, so Ready turns
// False naming the field instead of the controller reporting success for less than was asked.
// A field is refused only for a value it cannot honour: optional: false agrees with what it does.

interface ObjectReference {
  uid?: string | undefined;
  resourceVersion?: string | undefined;
  fieldPath?: string | undefined;
}

/** The reference fields that pin a referent's identity, which a single configured server cannot. */
export function pinnedReference(path: string, ref: ObjectReference | undefined): string | undefined {
  if (!ref) return undefined;
  for (const field of ["uid", "resourceVersion", "fieldPath"] as const) {
    if (ref[field]) return `${path}.${field}`;
  }
  return undefined;
}

/** A secret key reference marked optional: a missing password would be taken as none. */
export function optionalSecret(
  path: string,
  ref: { optional?: boolean | undefined } | undefined,
): string | undefined {
  return ref?.optional === true ? `${path}.optional` : undefined;
}

export function firstOf(...fields: (string | undefined)[]): string | undefined {
  return fields.find((f) => f !== undefined);
}
