// The GitOps tools' readings of an object: kstatus (tools/kstatus, sigs.k8s.io/cli-utils built from the
// Go module proxy), and the Argo CD health check in deploy/vhost-broker/files/argocd-health.lua as
// Argo CD runs it (tools/argocd-health, gopher-lua with Argo CD's libraries) and in Debian's Lua 5.1
// with the same libraries. tools/build.sh caches each build in ~/.cache/vhost-broker/tools.
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
export const HEALTH_LUA = `${root}deploy/vhost-broker/files/argocd-health.lua`;

/** tools/build.sh: the tool built (or found) in the cache; its path. */
export async function goTool(name: "kstatus" | "argocd-health"): Promise<string> {
  const { stdout } = await run("bash", [`${root}tools/build.sh`, name], { maxBuffer: 1024 * 1024 });
  return stdout.trim();
}

async function withStdin(binary: string, args: string[], input: string): Promise<string> {
  const child = run(binary, args, { maxBuffer: 16 * 1024 * 1024 });
  child.child.stdin?.end(input);
  return (await child).stdout;
}

export interface Kstatus {
  kind: string;
  namespace?: string;
  name: string;
  status: "InProgress" | "Failed" | "Current" | "Terminating" | "NotFound" | "Unknown";
  message: string;
  conditions: { type: string; status: string; reason: string; message: string }[];
}

/** kstatus of each object (as JSON objects or one List), in order. */
export async function kstatus(binary: string, objects: readonly unknown[]): Promise<Kstatus[]> {
  const out = await withStdin(binary, [], objects.map((o) => JSON.stringify(o)).join("\n"));
  return out
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Kstatus);
}

export interface Health {
  status: string;
  message: string;
}

/** The check in gopher-lua, as Argo CD runs it. */
export async function argoHealth(binary: string, object: unknown, script = HEALTH_LUA): Promise<Health> {
  const out = await withStdin(binary, [script], JSON.stringify(object));
  const answer = JSON.parse(out) as { status?: string; message?: string; error?: string };
  if (answer.error !== undefined) throw new Error(`the check failed in gopher-lua: ${answer.error}`);
  return { status: answer.status ?? "", message: answer.message ?? "" };
}

/**
 * Debian's Lua 5.1 interpreter. It is installed with apt-get, as root, when missing (as the local
 * environment installs RabbitMQ and MariaDB); the path, or why there is none.
 */
export function lua51(): string {
  const found = spawnSync("sh", ["-c", "command -v lua5.1"], { encoding: "utf8" }).stdout.trim();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error("Debian's lua5.1 is not installed and this is not root: apt-get install lua5.1");
  }
  const install = spawnSync(
    "sh",
    [
      "-c",
      "apt-get install -y --no-install-recommends lua5.1 || (apt-get update && apt-get install -y --no-install-recommends lua5.1)",
    ],
    { encoding: "utf8", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } },
  );
  if (install.status !== 0 || !existsSync("/usr/bin/lua5.1")) {
    throw new Error(`apt-get install lua5.1 failed: ${install.stderr.slice(-2000)}`);
  }
  return "/usr/bin/lua5.1";
}

/** A JSON value as a Lua 5.1 expression: strings byte by byte, null as nil (as Argo CD decodes it). */
export function luaLiteral(value: unknown): string {
  if (value === null || value === undefined) return "nil";
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`no JSON number: ${value}`);
    return String(value);
  }
  if (typeof value === "string") {
    let out = '"';
    for (const byte of Buffer.from(value, "utf8")) {
      out +=
        byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c
          ? String.fromCharCode(byte)
          : `\\${byte}`;
    }
    return `${out}"`;
  }
  if (Array.isArray(value)) return `{${value.map(luaLiteral).join(", ")}}`;
  if (typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>).map(
      ([k, v]) => `[${luaLiteral(k)}] = ${luaLiteral(v)}`,
    );
    return `{${fields.join(", ")}}`;
  }
  throw new Error(`no JSON value: ${typeof value}`);
}

/**
 * The check in Lua 5.1 with what Argo CD gives a check from argocd-cm: the base and table libraries
 * and os.time/os.date, no string, math, io or debug library, and no string methods (`s:find`), since
 * Argo CD opens no string library.
 */
export async function lua51Health(binary: string, object: unknown, script = HEALTH_LUA): Promise<Health> {
  const harness = `
local check = assert(loadfile(${luaLiteral(script)}))
local env = {
  obj = ${luaLiteral(object)},
  assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs, pcall = pcall,
  rawequal = rawequal, rawget = rawget, rawset = rawset, select = select, tonumber = tonumber,
  tostring = tostring, type = type, unpack = unpack, xpcall = xpcall,
  getmetatable = getmetatable, setmetatable = setmetatable,
  table = table, os = { time = os.time, date = os.date },
}
env._G = env
setfenv(check, env)
local write = io.write
getmetatable("").__index = nil
local ok, hs = pcall(check)
if not ok then write("error\\t", tostring(hs)) return end
if type(hs) ~= "table" then write("error\\tthe check returned a ", type(hs)) return end
write(tostring(hs.status), "\\t", tostring(hs.message))
`;
  const out = await withStdin(binary, ["-"], harness);
  const tab = out.indexOf("\t");
  const [status, message] = [out.slice(0, tab), out.slice(tab + 1)];
  if (status === "error") throw new Error(`the check failed in Lua 5.1: ${message}`);
  return { status, message };
}
