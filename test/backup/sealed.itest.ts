// A sealed OpenBao, which the shared local OpenBao (dev mode, always unsealed) cannot show: this file
// starts a private OpenBao server with in-memory storage from the same binary, initializes it (which
// leaves it sealed), and stops it afterwards.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openBaoStore } from "../../src/backup/openbao.ts";
import { BackupError, isStoreUnavailable } from "../../src/backup/store.ts";
import { freePort } from "../../harness/world/ports.ts";

function baoBinary(): string {
  const root = join(process.env.VHOST_BROKER_CACHE ?? join(homedir(), ".cache", "vhost-broker"), "openbao");
  const found = (existsSync(root) ? readdirSync(root) : [])
    .map((v) => join(root, v, "bin", "bao"))
    .find((p) => existsSync(p));
  if (!found) throw new Error(`no bao binary under ${root}; run scripts/localenv.sh up`);
  return found;
}

let bao: ChildProcess | undefined;
let dir = "";
let address = "";

async function api(path: string, init?: RequestInit): Promise<Response> {
  return fetch(`${address}/v1/${path}`, init);
}

beforeAll(async () => {
  const port = await freePort();
  address = `http://127.0.0.1:${port}`;
  dir = mkdtempSync(join(tmpdir(), "vb-sealed-bao-"));
  writeFileSync(
    join(dir, "config.hcl"),
    `storage "inmem" {}\nlistener "tcp" {\n  address = "127.0.0.1:${port}"\n  tls_disable = true\n}\ndisable_mlock = true\n`,
  );
  bao = spawn(baoBinary(), ["server", `-config=${join(dir, "config.hcl")}`], { stdio: "ignore" });
  for (let i = 0; i < 100; i++) {
    const up = await api("sys/health").then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the private OpenBao did not start within 10 s");
});

afterAll(() => {
  if (bao?.pid) process.kill(bao.pid);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a sealed OpenBao", () => {
  const token = "hvs.sealed-test-token-0123456789";
  const password = "sealed-test-password-0123456789";
  const store = () =>
    openBaoStore({ address, auth: { method: "token", token }, mount: "kv-v2", timeoutMs: 5_000 });

  it("reports an uninitialized server as sealed", async () => {
    expect(await store().health()).toEqual({
      ready: false,
      state: "sealed",
      message: `OpenBao at ${address} is not initialized`,
    });
  });

  it("reports an initialized, sealed server as sealed, and refuses writes as sealed", async () => {
    const init = await api("sys/init", {
      method: "PUT",
      body: JSON.stringify({ secret_shares: 1, secret_threshold: 1 }),
    });
    expect(init.status).toBe(200);
    expect(await store().health()).toEqual({
      ready: false,
      state: "sealed",
      message: `OpenBao at ${address} is sealed`,
    });

    const err = await store()
      .write("sealed/credentials", { password })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BackupError);
    expect(err).toMatchObject({ kind: "sealed", status: 503 });
    expect(isStoreUnavailable(err)).toBe(true);
    expect(String(err)).not.toContain(token);
    expect(String(err)).not.toContain(password);
  });
});
