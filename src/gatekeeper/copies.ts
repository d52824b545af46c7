// The copies plugins receive: a validating plugin gets a deeply frozen one (an ES module runs in strict
// mode, so a write to it throws), a mutating plugin a private one it may change. What a plugin reads
// through its pass's port is frozen too: the port reads from the informers' caches, whose objects every
// controller shares, and a plugin that changed one would change what they all see.

import { deepFreeze } from "../runtime/base/freeze.ts";
import type { Kube } from "../runtime/port/kube.ts";

export function copyOf<T>(value: T): T {
  return structuredClone(value);
}

export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value));
}

/** `kube` with every object it returns a frozen copy (the writes go through as they are). */
export function frozenReads(kube: Kube): Kube {
  return {
    get: async (...args) => frozenCopy(await kube.get(...args)),
    list: async (...args) => frozenCopy(await kube.list(...args)),
    listByIndex: async (...args) => frozenCopy(await kube.listByIndex(...args)),
    apply: async (...args) => frozenCopy(await kube.apply(...args)),
    create: async (...args) => frozenCopy(await kube.create(...args)),
    patchStatus: (...args) => kube.patchStatus(...args),
    ensureFinalizer: (...args) => kube.ensureFinalizer(...args),
    removeFinalizer: (...args) => kube.removeFinalizer(...args),
    patchMetadata: async (...args) => frozenCopy(await kube.patchMetadata(...args)),
    delete: (...args) => kube.delete(...args),
  };
}
