// Restoring an order's credentials from the OpenBao backup, through the operator process, as
// docs/backup.md tells a platform person: the backup's path names the order in its custom_metadata; with
// the operator running, a lost delivered Secret and broker user come back by themselves with the
// backed-up credential; with it stopped, the page's own commands (its `sh` blocks, run in bash as written)
// restore both from the backup, a consumer publishes and consumes with them, and the operator, started
// again, carries on with the same generation. No password reaches the operator's log, the order's
// conditions or the Events.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { userName, vhostName } from "../src/orders/rabbitmq/naming.ts";
import { OperatorProcess } from "../harness/operator/operator-process.ts";
import { amqpLogin } from "../harness/probes/login-prober.ts";
import { baoBinary } from "../harness/world/bao.ts";
import { localEnv } from "../harness/world/env.ts";
import { eventually, isApiError } from "../harness/world/kube.ts";
import {
  applyOrder,
  brokerApi,
  createWorld,
  destroyWorld,
  isReady,
  readOrder,
  readSecret,
  waitForOrder,
  worldEvents,
  type World,
} from "../harness/world/world.ts";

const run = promisify(execFile);
const env = localEnv();
const ORDER = "restored";
/** A User deleted on the broker is declared again at its next verification: 20 s here, not 5 min. */
const OPERATOR_ARGS = ["--topology-verification-period=20s"];

/** The `sh` blocks of docs/backup.md's section on restoring: the order's variables, then the steps. */
function restoreBlocks(): { variables: string; steps: string[] } {
  const page = readFileSync(fileURLToPath(new URL("../docs/backup.md", import.meta.url)), "utf8");
  const start = page.indexOf("\n## Restoring an order's credentials\n");
  const end = page.indexOf("\n## ", start + 1);
  const section = page.slice(start, end);
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? "");
  const [variables = "", ...steps] = blocks;
  return { variables, steps };
}

/** Runs the page's steps in bash, as a person pastes them, with the order's variables and `bao`, `kubectl`. */
async function runSteps(world: World, steps: string[], extra = ""): Promise<string> {
  const bin = mkdtempSync(join(tmpdir(), "vb-restore-bin-"));
  try {
    symlinkSync(baoBinary(), join(bin, "bao"));
    symlinkSync(env.KUBECTL, join(bin, "kubectl"));
    const { stdout } = await run("bash", ["-euo", "pipefail", "-c", [...steps, extra].join("\n")], {
      env: {
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        HOME: process.env.HOME ?? tmpdir(),
        KUBECONFIG: env.KUBECONFIG,
        BAO_ADDR: env.BAO_ADDR,
        BAO_TOKEN: env.BAO_TOKEN,
        MOUNT: "kv-v2",
        CP_NS: world.cpNs,
        NS: world.tenantNs,
        ORDER,
        BUS: "rabbitmq",
        MGMT: world.broker.managementUrl.replace(/\/+$/, ""),
      },
      timeout: 60_000,
    });
    return stdout;
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

/** OpenBao's own view of the order's path, with the root token: the latest version and the metadata. */
async function backup(path: string) {
  const get = async (area: string) => {
    const res = await fetch(`${env.BAO_ADDR}/v1/kv-v2/${area}/${path}`, {
      headers: { "X-Vault-Token": env.BAO_TOKEN },
    });
    if (!res.ok) throw new Error(`OpenBao ${area}/${path}: HTTP ${res.status}`);
    return ((await res.json()) as { data: Record<string, unknown> }).data;
  };
  const data = (await get("data")) as { data: Record<string, string>; metadata: { version: number } };
  const metadata = (await get("metadata")) as { custom_metadata: Record<string, string> | null };
  return { keys: data.data, version: data.metadata.version, customMetadata: metadata.custom_metadata };
}

describe("restoring an order's credentials from the OpenBao backup, operator process", () => {
  let world: World | undefined;
  let operator: OperatorProcess | undefined;
  /** The log of every operator process this file ran, for the check that no password is in it. */
  const logs: string[] = [];
  const w = (): World => {
    if (!world) throw new Error("no world");
    return world;
  };
  const key = () => ({ cluster: "", namespace: w().tenantNs, name: ORDER });
  const path = () => `openstack/rabbitmq/${w().cpNs}/${vhostName(key())}-vhost/credentials`;
  const secretName = `${ORDER}-credentials`;
  const deleteSecret = () =>
    w()
      .cluster.core.deleteNamespacedSecret({ namespace: w().tenantNs, name: secretName })
      .catch((error: unknown) => {
        if (!isApiError(error, 404)) throw error;
      });
  const deleteBrokerUser = async () => {
    const res = await brokerApi(w(), "DELETE", `/api/users/${encodeURIComponent(userName(key(), 1))}`);
    await res.arrayBuffer();
    expect(res.status).toBe(204);
  };
  const restoredSecret = async () => readSecret(w(), w().tenantNs, secretName).catch(() => undefined);

  beforeAll(async () => {
    world = await createWorld("bkr");
    operator = await OperatorProcess.start({ args: OPERATOR_ARGS });
    await applyOrder(world, ORDER, {
      rotation: { interval: "0s", gracePeriod: "30s" },
      deletionPolicy: "Delete",
    });
    await waitForOrder(
      world,
      ORDER,
      "generation 1 Ready",
      (o) => isReady(o) && o?.status?.passwordGeneration === 1,
      90_000,
    );
  }, 180_000);

  afterAll(async () => {
    try {
      await destroyWorld(world);
    } finally {
      if (operator) logs.push(operator.logs());
      await operator?.stop();
    }
  }, 120_000);

  it("names the order in its path's custom_metadata, and the page finds the path by it", async () => {
    const order = await readOrder(w(), ORDER);
    const stored = await backup(path());
    expect(stored.customMetadata).toEqual({
      "managed-by": "vhost-broker",
      cluster: "management",
      namespace: w().tenantNs,
      kind: "RabbitMQVhost",
      name: ORDER,
      uid: order?.metadata?.uid,
      generation: "1",
    });
    expect(stored.keys).toEqual(await readSecret(w(), w().tenantNs, secretName));
    const { steps } = restoreBlocks();
    expect(await runSteps(w(), steps.slice(0, 1), 'printf "\\n%s\\n" "$BACKUP"')).toMatch(
      new RegExp(`\\n${path()}\\n$`),
    );
  }, 60_000);

  it("brings a lost Secret and broker user back by itself while it runs, with the backed-up credential", async () => {
    const before = await backup(path());
    await deleteSecret();
    await deleteBrokerUser();
    const started = performance.now();
    await eventually(
      "the Secret and the broker user back",
      async () => {
        const secret = await restoredSecret();
        if (!secret || secret["password"] !== before.keys["password"]) return undefined;
        return (await amqpLogin(secret["transport_url"] ?? "")).kind === "ok" || undefined;
      },
      90_000,
      500,
    );
    console.info(
      `the operator restored the Secret and the user in ${Math.round(performance.now() - started)} ms`,
    );
    const after = await backup(path());
    expect(after.version).toBe(before.version);
    expect(after.customMetadata).toEqual(before.customMetadata);
  }, 120_000);

  it("is restored by the page's commands while the operator is stopped, and the operator carries on", async () => {
    const stored = await backup(path());
    const running = operator;
    if (running) logs.push(running.logs());
    // SIGKILL keeps the operator lock with this test, so no other run's operator slips in meanwhile.
    await running?.kill();
    operator = undefined;
    await deleteSecret();
    await deleteBrokerUser();
    const lost = await amqpLogin(stored.keys["transport_url"] ?? "");
    expect(lost.kind).toBe("auth");

    const { variables, steps } = restoreBlocks();
    expect(variables.match(/^[A-Z_]+(?==)/gm)).toEqual(["MOUNT", "CP_NS", "NS", "ORDER", "BUS", "MGMT"]);
    expect(steps).toHaveLength(4);
    await runSteps(w(), steps);

    const restored = await restoredSecret();
    expect(restored).toEqual(stored.keys);
    const login = await amqpLogin(restored?.["transport_url"] ?? "");
    expect(login).toEqual({ kind: "ok" });

    operator = await OperatorProcess.start({ args: OPERATOR_ARGS });
    const labelled = async () => {
      const secret = await w().cluster.core.readNamespacedSecret({
        namespace: w().tenantNs,
        name: secretName,
      });
      return secret.metadata?.labels?.["c5c3.io/rabbitmqvhost-name"] === ORDER || undefined;
    };
    await eventually("the operator carrying on with the restored Secret", labelled, 60_000, 500);
    const order = await waitForOrder(w(), ORDER, "Ready again", isReady, 60_000);
    expect(order?.status?.passwordGeneration).toBe(1);
    expect(await restoredSecret()).toEqual(stored.keys);
    expect(await amqpLogin(stored.keys["transport_url"] ?? "")).toEqual({ kind: "ok" });
    const after = await backup(path());
    expect([after.version, after.customMetadata]).toEqual([stored.version, stored.customMetadata]);
  }, 180_000);

  it("puts no password in the operator's log, the order's conditions or the Events", async () => {
    const password = (await backup(path())).keys["password"] ?? "";
    expect(password).not.toBe("");
    const order = await readOrder(w(), ORDER);
    const notes = (await worldEvents(w())).map((e) => e.message ?? "");
    for (const text of [...logs, operator?.logs() ?? "", JSON.stringify(order?.status ?? {}), ...notes]) {
      expect(text).not.toContain(password);
    }
  }, 30_000);
});
