// The verification pass answered from the broker's listing of the period (issue 32), on the in-memory
// port and broker: many objects due together cost one GET of each list endpoint they need, not a GET
// per object; only what differs or is missing is read on its own and declared again; a restarted
// process confirms Ready objects from the same listings and writes nothing.
import { beforeEach, describe, expect, it } from "vitest";
import { permissionKind, vhostKind } from "../../src/api/index.ts";
import {
  newPass,
  putManagedBus,
  reconcileKind,
  ref,
  restartedDeps,
  settings,
  namespace,
  type Pass,
} from "./pass-support.ts";

const COUNT = 5;
const period = settings.verificationPeriodMs;
const vhost = (i: number) => `v${i}`;
const permissionPath = (i: number) => `/api/permissions/v${i}/u${i}`;

let pass: Pass;
const passAll = async (deps = pass.deps) => {
  const results = [];
  for (let i = 0; i < COUNT; i++) {
    results.push(await reconcileKind(deps, vhostKind, vhost(i)));
    results.push(await reconcileKind(deps, permissionKind, `p${i}`));
  }
  return results;
};
const requestsDuring = async (run: () => Promise<unknown>) => {
  const before = pass.broker.requests.length;
  await run();
  return pass.broker.requests.slice(before);
};

beforeEach(async () => {
  pass = newPass();
  putManagedBus(pass.kube);
  for (let i = 0; i < COUNT; i++) {
    pass.kube.put(vhostKind, { metadata: { name: vhost(i), namespace }, spec: { name: vhost(i), ...ref } });
    pass.kube.put(permissionKind, {
      metadata: { name: `p${i}`, namespace },
      spec: {
        user: `u${i}`,
        vhost: vhost(i),
        permissions: { configure: "", write: ".*", read: ".*" },
        ...ref,
      },
    });
  }
  await passAll();
});

describe("the verification by list", () => {
  it("reads each list endpoint once for every object due, writes nothing, and counts from the listing's start", async () => {
    pass.clock.advance(period);
    const listedAt = pass.clock.now();
    const requests = await requestsDuring(async () => {
      const results = await passAll();
      // Due again a period after the listing started, whenever each pass ran.
      expect(new Set(results.map((r) => r.requeueAfterMs))).toEqual(
        new Set([listedAt + period - pass.clock.now()]),
      );
    });
    expect(requests.sort()).toEqual(["GET /api/permissions", "GET /api/vhost-limits", "GET /api/vhosts"]);
    // Before the next period nothing is read.
    pass.clock.advance(period - 1);
    expect(await requestsDuring(() => passAll())).toEqual([]);
  });

  it("reads on its own and declares again only what the listing shows as missing or different", async () => {
    pass.broker.remove("/api/vhosts/v2");
    pass.broker.store(permissionPath(3), { configure: "", write: "^$", read: ".*" });
    pass.clock.advance(period);
    const requests = await requestsDuring(() => passAll());
    const own = requests.filter(
      (r) => !["GET /api/permissions", "GET /api/vhost-limits", "GET /api/vhosts"].includes(r),
    );
    expect(own).toEqual([
      "GET /api/vhosts/v2",
      "PUT /api/vhosts/v2",
      "GET /api/vhost-limits/v2",
      `GET ${permissionPath(3)}`,
      `PUT ${permissionPath(3)}`,
    ]);
    expect(pass.broker.objectAt(permissionPath(3))).toMatchObject({ write: ".*" });
  });

  it("confirms Ready objects after a restart from the listings, with no write", async () => {
    const restarted = restartedDeps(pass);
    const requests = await requestsDuring(() => passAll(restarted));
    // And the mark of the broker's definitions, read once (src/topology/broker-checks.ts).
    expect(requests.sort()).toEqual([
      "GET /api/permissions",
      "GET /api/users/admin",
      "GET /api/vhost-limits",
      "GET /api/vhosts",
    ]);
  });
});
