// The backends one pass reaches: the one the ControlPlane names, and those its children still name after
// a migration (the old RabbitmqCluster its superseded users are on). Each is read once per pass.
import type { Kube } from "../../runtime/port/kube.ts";
import type { ControlPlaneView } from "./gates.ts";
import type { Backend, OrderKind } from "./kind.ts";

/** A backend by name: usable, not usable now (and why), or gone (its object deleted). */
export type NamedBackend<B extends Backend> =
  { kind: "open"; value: B } | { kind: "closed"; message: string } | { kind: "gone" };

export class PassBackends<B extends Backend> {
  readonly #read = new Map<string, Promise<NamedBackend<B>>>();
  readonly #kind: OrderKind<B>;
  readonly #management: Kube;
  readonly #controlPlane: ControlPlaneView;
  /** The backend the ControlPlane names, as its gate opened it. */
  readonly current: B;

  constructor(kind: OrderKind<B>, management: Kube, controlPlane: ControlPlaneView, current: B) {
    this.#kind = kind;
    this.#management = management;
    this.#controlPlane = controlPlane;
    this.current = current;
  }

  /** The backend called `name` (undefined: the current one). */
  named(name: string | undefined): Promise<NamedBackend<B>> {
    if (name === undefined || name === this.current.name)
      return Promise.resolve({ kind: "open", value: this.current });
    let read = this.#read.get(name);
    if (!read) {
      read = this.#readNamed(name);
      this.#read.set(name, read);
    }
    return read;
  }

  async #readNamed(name: string): Promise<NamedBackend<B>> {
    if (!this.#kind.backendNamed)
      return { kind: "closed", message: `the operator cannot reach ${this.#kind.backendKind} "${name}"` };
    const gate = await this.#kind.backendNamed(this.#management, this.#controlPlane, name);
    if (gate === undefined) return { kind: "gone" };
    return gate.open ? { kind: "open", value: gate.value } : { kind: "closed", message: gate.gate.message };
  }
}
