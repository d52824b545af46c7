// The backup's custom_metadata as whole RabbitMQVhost passes write it, on the fake Kubernetes port with
// the in-memory store: the owning order and generation 1 once delivered, nothing more on passes that find
// it right, and one write more at a rotation's switch, beside the new version.
import { beforeEach, expect, it } from "vitest";
import { CP_NS, TENANT, clock, store } from "../orders/pass-world.ts";
import {
  NAME,
  converge,
  order,
  pass,
  setUp,
  status,
  topology,
  world,
} from "../orders/rabbitmq-passes/fixture.ts";

beforeEach(setUp);

it("names the order and its generation in the backup's custom_metadata, written once per version", async () => {
  world();
  await converge();
  const path = `openstack/rabbitmq/${CP_NS}/${status()["vhost"] as string}-vhost/credentials`;
  const owner = {
    "managed-by": "vhost-broker",
    cluster: "management",
    namespace: TENANT,
    kind: "RabbitMQVhost",
    name: NAME,
    uid: order()?.metadata?.uid,
    generation: "1",
  };
  expect(owner.uid).toBeTruthy();
  expect(store.metadata.get(path)).toEqual(owner);
  expect(store.calls.describe).toBe(1);

  clock.advance(30_000);
  await pass();
  expect(store.calls.describe).toBe(1);

  clock.advance(150_000);
  await pass();
  topology();
  await pass();
  topology();
  await pass();
  expect(status()["passwordGeneration"]).toBe(2);
  expect(store.paths.get(path)?.version).toBe(2);
  expect(store.metadata.get(path)).toEqual({ ...owner, generation: "2" });
  expect(store.calls.describe).toBe(2);
});
