// The built image run as a pod would run it, without a container engine: scripts/image.sh builds the
// OCI image, umoci unpacks it into a runtime bundle, and runc starts it under the security context the
// chart gives the Deployment's pod and container. The container shares the host's network, so it
// reaches the local environment on loopback as the operator process of the other tests does.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { z } from "zod";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));

/** Builds the image (or reuses the cached build) and returns its reference, `oci:<layout>:<tag>`. */
export async function buildImage(): Promise<string> {
  const { stdout } = await run("bash", [`${root}scripts/image.sh`], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  const ref = stdout.trim().split("\n").pop() ?? "";
  if (!ref.startsWith("oci:")) throw new Error(`scripts/image.sh printed no image reference: ${stdout}`);
  return ref;
}

/** Unpacks `oci:<layout>:<tag>` into a runtime bundle (config.json and rootfs/) at `dir`. */
export async function unpackImage(ref: string, dir: string): Promise<void> {
  await run("umoci", ["unpack", "--image", ref.slice("oci:".length), dir]);
}

const securityContext = z.object({
  runAsUser: z.number().int().optional(),
  runAsGroup: z.number().int().optional(),
  runAsNonRoot: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  capabilities: z
    .object({ drop: z.array(z.string()).optional(), add: z.array(z.string()).optional() })
    .optional(),
});

const podTemplate = z.object({
  spec: z.object({
    securityContext: securityContext.optional(),
    containers: z.array(
      z.object({
        name: z.string(),
        securityContext: securityContext.optional(),
        volumeMounts: z.array(z.object({ name: z.string(), mountPath: z.string() })).optional(),
      }),
    ),
    volumes: z
      .array(z.object({ name: z.string(), emptyDir: z.object({}).loose().optional() }).loose())
      .optional(),
  }),
});

/** What runc is told of a pod's security context and its emptyDir volumes. */
export interface ContainerSecurity {
  uid: number;
  gid: number;
  readOnlyRoot: boolean;
  noNewPrivileges: boolean;
  /** The capabilities left after drop and add. */
  capabilities: string[];
  /** Mount paths of emptyDir volumes, which become tmpfs mounts. */
  emptyDirs: string[];
}

/** The image's default capabilities as runc's spec names them (umoci's default set). */
const DEFAULT_CAPABILITIES = ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"];

/**
 * The security of `container` in a Deployment's pod template: the container's context over the pod's,
 * as the kubelet merges them. A context that runs as root or names no user is refused, because the
 * test must not pass on the image's defaults.
 */
export function securityFromPodTemplate(template: unknown, container: string): ContainerSecurity {
  const spec = podTemplate.parse(template).spec;
  const c = spec.containers.find((x) => x.name === container);
  if (!c) throw new Error(`the pod template has no container ${container}`);
  const merged = { ...spec.securityContext, ...c.securityContext };
  if (merged.runAsUser === undefined || merged.runAsUser === 0) {
    throw new Error("the pod template runs its container as root or as the image's user");
  }
  const drop = merged.capabilities?.drop ?? [];
  const add = (merged.capabilities?.add ?? []).map((name) => `CAP_${name}`);
  const kept = drop.includes("ALL") ? [] : DEFAULT_CAPABILITIES.filter((cap) => !drop.includes(cap.slice(4)));
  const emptyDirNames = new Set((spec.volumes ?? []).filter((v) => v.emptyDir).map((v) => v.name));
  return {
    uid: merged.runAsUser,
    gid: merged.runAsGroup ?? merged.runAsUser,
    readOnlyRoot: merged.readOnlyRootFilesystem ?? false,
    noNewPrivileges: merged.allowPrivilegeEscalation === false,
    capabilities: [...new Set([...kept, ...add])],
    emptyDirs: (c.volumeMounts ?? []).filter((m) => emptyDirNames.has(m.name)).map((m) => m.mountPath),
  };
}

export interface BundleProcess {
  /** The container's command line after the image's entrypoint, e.g. the operator's flags. */
  args: string[];
  env: Record<string, string>;
  /** Host paths bound read-only at the same path inside the container. */
  readOnlyBinds: string[];
}

interface RuntimeSpec {
  process: {
    terminal: boolean;
    user: { uid: number; gid: number };
    args: string[];
    env: string[];
    capabilities: Record<string, string[]>;
    noNewPrivileges: boolean;
  };
  root: { path: string; readonly?: boolean };
  mounts: { destination: string; type: string; source: string; options: string[] }[];
  linux: { namespaces: { type: string }[] };
}

/**
 * Rewrites the bundle's config.json: the image's entrypoint with `proc.args`, the security, the host's
 * network, tmpfs for each emptyDir and read-only binds. Returns the spec written.
 */
export function configureBundle(dir: string, security: ContainerSecurity, proc: BundleProcess): RuntimeSpec {
  const path = `${dir}/config.json`;
  const spec = JSON.parse(readFileSync(path, "utf8")) as RuntimeSpec;
  const entrypoint = spec.process.args;
  spec.process.terminal = false;
  spec.process.user = { uid: security.uid, gid: security.gid };
  spec.process.args = [...entrypoint, ...proc.args];
  spec.process.env = [...spec.process.env, ...Object.entries(proc.env).map(([k, v]) => `${k}=${v}`)];
  for (const set of Object.keys(spec.process.capabilities))
    spec.process.capabilities[set] = security.capabilities;
  spec.process.noNewPrivileges = security.noNewPrivileges;
  spec.root.readonly = security.readOnlyRoot;
  spec.linux.namespaces = spec.linux.namespaces.filter((n) => n.type !== "network");
  for (const destination of security.emptyDirs) {
    spec.mounts.push({
      destination,
      type: "tmpfs",
      source: "tmpfs",
      options: ["nosuid", "nodev", "mode=1777", "size=64m"],
    });
  }
  for (const host of proc.readOnlyBinds) {
    spec.mounts.push({ destination: host, type: "bind", source: host, options: ["rbind", "ro"] });
  }
  writeFileSync(path, JSON.stringify(spec, null, 2));
  return spec;
}

/** `runc run` in the foreground: runc passes the signals it gets on to the container's process. */
export function runContainer(dir: string, id: string): ChildProcess {
  return spawn("runc", ["run", "--bundle", dir, id], { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
}

/** Removes the container whatever its state (after a SIGKILL of runc itself it would outlive it). */
export async function removeContainer(id: string): Promise<void> {
  await run("runc", ["delete", "--force", id]).catch(() => undefined);
}

/** What `id`'s process is and how it runs, read from inside: uid, capabilities and whether / is writable. */
export async function inspectContainer(
  id: string,
): Promise<{ uid: string; capEff: string; rootWritable: boolean }> {
  // The image has no shell; its own Node reads /proc and tries a write.
  const script = [
    "const fs = require('node:fs');",
    "const status = fs.readFileSync('/proc/1/status', 'utf8');",
    "let rootWritable = true; try { fs.writeFileSync('/probe', 'x'); } catch { rootWritable = false; }",
    "console.log(JSON.stringify({ uid: /^Uid:\\s+(.*)$/m.exec(status)[1], capEff: /^CapEff:\\s+(.*)$/m.exec(status)[1], rootWritable }));",
  ].join(" ");
  const { stdout } = await run("runc", ["exec", id, "/usr/local/bin/node", "-e", script]);
  return JSON.parse(stdout) as { uid: string; capEff: string; rootWritable: boolean };
}
