// Objects the operator does not serve, beside its orders: Secrets and ConfigMaps without its labels, for
// the memory figures (its Secret watches are label-selected and it watches no ConfigMap).
import { randomBytes } from "node:crypto";
import type { KubeRest } from "../../src/runtime/port/kube-rest.ts";
import { inParallel, range } from "./concurrency.ts";

/** `count` Secrets and as many ConfigMaps of 512 bytes each in `namespace`, 32 creations at a time. */
export async function createUnrelated(rest: KubeRest, namespace: string, count: number): Promise<void> {
  const filler = randomBytes(384).toString("base64");
  await inParallel(range(count), 32, async (i) => {
    await rest.request("POST", `/api/v1/namespaces/${namespace}/secrets`, {
      body: { metadata: { name: `unrelated-${i}` }, type: "Opaque", data: { blob: filler } },
    });
    await rest.request("POST", `/api/v1/namespaces/${namespace}/configmaps`, {
      body: { metadata: { name: `unrelated-${i}` }, data: { blob: filler } },
    });
  });
}
