import { describe, expect, it } from "vitest";
import { FakeKube } from "../../../harness/fakes/fake-kube.ts";
import type { Kind, KubeObject } from "./kube-rest.ts";
import { OwnWrites } from "./own-writes.ts";

const userKind: Kind = {
  group: "rabbitmq.com",
  version: "v1beta1",
  plural: "users",
  kind: "User",
  namespaced: true,
};
const secretKind: Kind = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };

const user = (name: string): KubeObject => ({ metadata: { name, namespace: "cp" }, spec: { tags: [] } });

describe("OwnWrites", () => {
  it("drops the echo of an apply or a create once, and no other version of the object", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const kube = own.recording(fake, "");
    const applied = await kube.apply(userKind, user("a"));
    expect(own.isEcho("", userKind, applied)).toBe(true);
    // Answered once: the same version seen again (a relist) passes.
    expect(own.isEcho("", userKind, applied)).toBe(false);

    const created = await kube.create(secretKind, { metadata: { name: "s", namespace: "cp" } });
    const changed = fake.put(secretKind, { ...created, data: { k: "dg==" } });
    expect(own.isEcho("", secretKind, changed)).toBe(false);
  });

  it("keeps writes apart by cluster and kind", async () => {
    const own = new OwnWrites();
    const applied = await own.recording(new FakeKube(), "target").apply(userKind, user("a"));
    expect(own.isEcho("", userKind, applied)).toBe(false);
    const again = await own.recording(new FakeKube(), "target").apply(userKind, user("a"));
    expect(own.isEcho("target", secretKind, again)).toBe(false);
    const third = await own.recording(new FakeKube(), "target").apply(userKind, user("a"));
    expect(own.isEcho("target", userKind, third)).toBe(true);
  });

  it("passes a change someone else made after the controller's write", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const applied = await own.recording(fake, "").apply(userKind, user("a"));
    const ready = fake.put(userKind, {
      ...applied,
      status: { conditions: [{ type: "Ready", status: "True" }] },
    });
    // The echo comes first and is dropped; the status after it passes.
    expect(own.isEcho("", userKind, applied)).toBe(true);
    expect(own.isEcho("", userKind, ready, applied)).toBe(false);
  });

  it("drops the update that only marks as deleting an object the controller deleted", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const kube = own.recording(fake, "");
    const held = fake.put(userKind, { ...user("a"), metadata: { ...user("a").metadata, finalizers: ["f"] } });
    await kube.delete(userKind, { namespace: "cp", name: "a" });
    const marked = fake.read(userKind, "cp", "a");
    expect(marked?.metadata?.deletionTimestamp).toBeDefined();
    expect(own.isEcho("", userKind, marked ?? {}, held)).toBe(true);
  });

  it("passes a deletion it did not issue, and a marked object that changed otherwise too", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const held = fake.put(userKind, { ...user("a"), metadata: { ...user("a").metadata, finalizers: ["f"] } });
    await fake.delete(userKind, { namespace: "cp", name: "a" });
    const marked = fake.read(userKind, "cp", "a") ?? {};
    expect(own.isEcho("", userKind, marked, held)).toBe(false);

    await own.recording(fake, "").delete(userKind, { namespace: "cp", name: "a" });
    const relabelled = { ...marked, metadata: { ...marked.metadata, labels: { other: "x" } } };
    expect(own.isEcho("", userKind, relabelled, held)).toBe(false);
  });

  it("judges an event that comes before its write answered once the write has answered", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const writing = own.recording(fake, "").apply(userKind, user("a"));
    // The fake stores at once and answers later, as the watch often reports a write before its response.
    const echo = fake.read(userKind, "cp", "a") ?? {};
    const verdict = own.isEcho("", userKind, echo);
    expect(verdict).toBeInstanceOf(Promise);
    await writing;
    expect(await verdict).toBe(true);
  });

  it("passes someone else's change that comes while the controller's write is under way", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const theirs = fake.put(userKind, { ...user("a"), status: { username: "x" } });
    // A write that changes the object: one that changes nothing answers with their version (the port's
    // contract, harness/fakes/kube-port-contract.ts).
    const writing = own.recording(fake, "").apply(userKind, { ...user("a"), spec: { tags: ["management"] } });
    const verdict = own.isEcho("", userKind, theirs);
    await writing;
    expect(await verdict).toBe(false);
  });

  it("passes the event of a write that failed", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    fake.failNext("apply", userKind, new Error("refused"));
    const writing = own.recording(fake, "").apply(userKind, user("a"));
    const verdict = own.isEcho("", userKind, {
      ...user("a"),
      metadata: { ...user("a").metadata, resourceVersion: "7" },
    });
    await expect(writing).rejects.toThrow("refused");
    expect(await verdict).toBe(false);
  });

  it("forgets the oldest writes beyond its capacity", async () => {
    const own = new OwnWrites(undefined, 2);
    const kube = own.recording(new FakeKube(), "");
    const first = await kube.apply(userKind, user("a"));
    const second = await kube.apply(userKind, user("b"));
    const third = await kube.apply(userKind, user("c"));
    expect(own.isEcho("", userKind, first)).toBe(false);
    expect(own.isEcho("", userKind, second)).toBe(true);
    expect(own.isEcho("", userKind, third)).toBe(true);
  });
});

describe("OwnWrites.isBehind", () => {
  it("says the cache is behind while it holds the version a status write replaced, for 5 s at most", async () => {
    const fake = new FakeKube();
    const clock = { t: 1_000, monotonic: () => clock.t };
    const own = new OwnWrites(clock);
    const kube = own.recording(fake, "");
    const stored = fake.put(userKind, user("a"));
    expect(own.isBehind("", userKind, stored)).toBe(false);
    expect(await kube.patchStatus(userKind, stored, { username: "u" })).toBe(true);
    // The cache still has `stored`: behind, and again on the next look.
    expect(own.isBehind("", userKind, stored)).toBe(true);
    expect(own.isBehind("", userKind, stored)).toBe(true);
    expect(own.isBehind("", userKind, fake.read(userKind, "cp", "a") ?? {})).toBe(false);
    // Once another version was seen, the replaced one is forgotten.
    expect(own.isBehind("", userKind, stored)).toBe(false);

    const now = fake.read(userKind, "cp", "a") ?? {};
    await kube.patchStatus(userKind, now, { username: "v" });
    expect(own.isBehind("target", userKind, now)).toBe(false);
    clock.t += 5_000;
    expect(own.isBehind("", userKind, now)).toBe(false);
  });

  it("remembers nothing for a status write that changed nothing", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const stored = fake.put(userKind, { ...user("a"), status: { username: "u" } });
    expect(await own.recording(fake, "").patchStatus(userKind, stored, { username: "u" })).toBe(false);
    expect(own.isBehind("", userKind, stored)).toBe(false);
  });
});

describe("OwnWrites.isQuietRemoval", () => {
  it("silences the removal of an object deleted quietly, once, and keeps its other updates", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const kube = own.recording(fake, "");
    const held = fake.put(userKind, { ...user("a"), metadata: { ...user("a").metadata, finalizers: ["f"] } });
    await kube.delete(userKind, { namespace: "cp", name: "a" }, { quiet: true });
    const marked = fake.read(userKind, "cp", "a") ?? {};
    expect(own.isEcho("", userKind, marked, held)).toBe(true);
    // Someone else's change while it is being deleted still passes; the removal stays quiet.
    const failing = fake.put(userKind, {
      ...marked,
      status: { conditions: [{ type: "Ready", status: "False" }] },
    });
    expect(own.isEcho("", userKind, failing, marked)).toBe(false);
    expect(await own.isQuietRemoval("", userKind, failing)).toBe(true);
    expect(await own.isQuietRemoval("", userKind, failing)).toBe(false);
  });

  it("lets the removal of a plain delete, or of someone else's, pass", async () => {
    const fake = new FakeKube();
    const own = new OwnWrites();
    const kube = own.recording(fake, "");
    const secret = fake.put(secretKind, { metadata: { name: "s", namespace: "cp" } });
    await kube.delete(secretKind, { namespace: "cp", name: "s" });
    expect(await own.isQuietRemoval("", secretKind, secret)).toBe(false);
    const other = fake.put(secretKind, { metadata: { name: "t", namespace: "cp" } });
    expect(await own.isQuietRemoval("", secretKind, other)).toBe(false);
    await kube.delete(secretKind, { namespace: "cp", name: "t" }, { quiet: true });
    expect(await own.isQuietRemoval("target", secretKind, other)).toBe(false);
    expect(await own.isQuietRemoval("", secretKind, other)).toBe(true);
  });

  it("judges a removal reported before its delete answered once the delete has answered", async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    class SlowDelete extends FakeKube {
      override async delete(): Promise<void> {
        await answered;
      }
    }
    const slow = new SlowDelete();
    const own = new OwnWrites();
    const secret = slow.put(secretKind, { metadata: { name: "s", namespace: "cp" } });
    const deleting = own
      .recording(slow, "")
      .delete(secretKind, { namespace: "cp", name: "s" }, { quiet: true });
    const verdict = own.isQuietRemoval("", secretKind, secret);
    expect(verdict).toBeInstanceOf(Promise);
    answer();
    await deleting;
    expect(await verdict).toBe(true);
  });
});
