// The image as a platform runs it: built by scripts/image.sh (no Docker), unpacked, and started by runc
// under the security context the chart renders for its Deployment (uid 65532, read-only root, every
// capability dropped, no privilege escalation, /tmp on a tmpfs). An order goes Ready and is torn down
// through the containerised operator, which reaches the local environment over the host's network.
import { execFile } from "node:child_process";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localEnv } from "../harness/world/env.ts";
import { manifestObjects, renderChart } from "../harness/charts/helm.ts";
import {
  buildImage,
  configureBundle,
  inspectContainer,
  removeContainer,
  runContainer,
  securityFromPodTemplate,
  unpackImage,
  type ContainerSecurity,
} from "../harness/operator/runc-container.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import {
  applyOrder,
  condition,
  createWorld,
  destroyWorld,
  isReady,
  readSecret,
  waitForOrder,
  type World,
} from "../harness/world/world.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";

const id = `vhost-broker-image-e2e-${process.pid}`;

/**
 * The local kubeconfig with its certificates inline, owned by the container's user and readable by it
 * alone, as a mounted Secret would be: the local one names root's key files, which uid 65532 cannot read.
 */
async function containerKubeconfig(path: string, uid: number, gid: number): Promise<void> {
  const { KUBECTL, KUBECONFIG } = localEnv();
  const { stdout } = await promisify(execFile)(KUBECTL, [
    `--kubeconfig=${KUBECONFIG}`,
    "config",
    "view",
    "--raw",
    "--flatten",
  ]);
  writeFileSync(path, stdout, { mode: 0o400 });
  chownSync(path, uid, gid);
}

async function chartSecurity(): Promise<ContainerSecurity> {
  const objects = manifestObjects(
    await renderChart("vhost-broker", {
      release: "vhost-broker",
      namespace: "vhost-broker-system",
      set: { "settings.openbao-address": localEnv().BAO_ADDR },
    }),
  );
  const deployment = objects.find((o) => o.kind === "Deployment");
  if (!deployment) throw new Error("the chart renders no Deployment");
  return securityFromPodTemplate((deployment["spec"] as { template: unknown }).template, "vhost-broker");
}

describe("the image under runc with the chart's security context", () => {
  const bundle = mkdtempSync(`${tmpdir()}/vhost-broker-bundle-`);
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  let security: ContainerSecurity;
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };

  beforeAll(async () => {
    security = await chartSecurity();
    await unpackImage(await buildImage(), bundle);
    const kubeconfig = `${bundle}/kubeconfig`;
    await containerKubeconfig(kubeconfig, security.uid, security.gid);
    world = await createWorld("image");
    operator = await OperatorProcess.start({
      kubeconfig,
      launch: (flags, processEnv) => {
        const settings = Object.entries(processEnv).filter(
          (e): e is [string, string] => e[0].startsWith("VHOST_BROKER_") && e[1] !== undefined,
        );
        configureBundle(bundle, security, {
          args: flags,
          env: Object.fromEntries(settings),
          readOnlyBinds: [kubeconfig],
        });
        return runContainer(bundle, id);
      },
    });
  }, 600_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      await operator?.stop();
      await removeContainer(id);
      rmSync(bundle, { recursive: true, force: true });
    }
  }, 120_000);

  it("runs as the chart says: uid 65532, no capability, a read-only root", async () => {
    expect(security).toMatchObject({ uid: 65532, gid: 65532, readOnlyRoot: true, noNewPrivileges: true });
    expect(security.capabilities).toEqual([]);
    expect(security.emptyDirs).toEqual(["/tmp"]);
    const inside = await inspectContainer(id);
    expect(inside.uid.split(/\s+/)).toEqual(["65532", "65532", "65532", "65532"]);
    expect(inside.capEff).toBe("0000000000000000");
    expect(inside.rootWritable).toBe(false);
  }, 60_000);

  it("provisions, delivers and tears down an order", async () => {
    await applyOrder(w(), "boxed", { rotation: { interval: "0s", gracePeriod: "1m" } });
    const order = await waitForOrder(w(), "boxed", "boxed Ready", isReady, 120_000);
    expect(condition(order, "DeliveryReady")?.reason).toBe("Delivered");
    const data = await readSecret(w(), w().tenantNs, "boxed-credentials");
    expect(await amqpLogin(data["transport_url"] ?? "")).toEqual({ kind: "ok" });
    // Nothing secret in the container's output either.
    for (const secret of [data["password"], localEnv().BAO_TOKEN]) {
      expect(secret).toBeTruthy();
      expect(operator?.logs()).not.toContain(secret);
    }

    await w().custom.deleteNamespacedCustomObject({
      group: "c5c3.io",
      version: "v1alpha1",
      plural: "rabbitmqvhosts",
      namespace: w().tenantNs,
      name: "boxed",
    });
    await waitForOrder(w(), "boxed", "boxed torn down", (o) => o === undefined, 90_000);
  }, 240_000);

  it("stops on SIGTERM passed through runc, with exit code 0", async () => {
    expect(await operator?.stop()).toBe(0);
  }, 60_000);
});
