// Which topology objects read which Secret (a User's importCredentialsSecret, any kind's
// connectionSecret), so that a change to a labelled Secret re-reconciles its readers at once.
// Kept up to date by the reconcilers; an informer wiring lists every object at start, which fills it.

export interface ObjectRef {
  kind: string;
  namespace: string;
  name: string;
}

const objectKey = (o: ObjectRef) => `${o.kind}/${o.namespace}/${o.name}`;
const secretKey = (namespace: string, name: string) => `${namespace}/${name}`;

export class SecretIndex {
  /** secret key → object key → object */
  readonly #readers = new Map<string, Map<string, ObjectRef>>();
  /** object key → the secret keys it reads */
  readonly #reads = new Map<string, string[]>();

  /** Records that `object` reads the Secrets `secretNames` in its own namespace (replacing what it read before). */
  track(object: ObjectRef, secretNames: readonly string[]): void {
    this.untrack(object);
    const key = objectKey(object);
    const secrets = [...new Set(secretNames)].map((s) => secretKey(object.namespace, s));
    if (secrets.length === 0) return;
    this.#reads.set(key, secrets);
    for (const secret of secrets) {
      let readers = this.#readers.get(secret);
      if (!readers) this.#readers.set(secret, (readers = new Map()));
      readers.set(key, object);
    }
  }

  untrack(object: ObjectRef): void {
    const key = objectKey(object);
    for (const secret of this.#reads.get(key) ?? []) {
      const readers = this.#readers.get(secret);
      readers?.delete(key);
      if (readers?.size === 0) this.#readers.delete(secret);
    }
    this.#reads.delete(key);
  }

  /** The objects that read the Secret `namespace/name`, optionally only those of one kind. */
  readersOf(namespace: string, name: string, kind?: string): ObjectRef[] {
    const readers = [...(this.#readers.get(secretKey(namespace, name))?.values() ?? [])];
    return kind === undefined ? readers : readers.filter((r) => r.kind === kind);
  }
}
