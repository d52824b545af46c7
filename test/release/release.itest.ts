// scripts/release.sh run on this machine, and each artifact checked as its user would check it: the
// packaged charts lint and render what deploy/ renders, each image archive is an OCI layout whose one
// image is built for its architecture from this commit, and SHA256SUMS verifies them all. The images
// come from scripts/image.sh's cache, so a run whose sources did not change takes seconds.
// An integration test because helm is built by the local environment's `up` and image.sh needs root.
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as yaml from "yaml";
import { z } from "zod";
import { helmBinary, localKubeVersion, renderChart } from "../../harness/charts/helm.ts";

const run = promisify(execFile);
const root = fileURLToPath(new URL("../../", import.meta.url));
const version = z
  .object({ version: z.string() })
  .parse(JSON.parse(readFileSync(`${root}package.json`, "utf8"))).version;

/** Each image's architecture, and its ELF e_machine (the Node binary the image carries must match). */
const architectures = [
  { arch: "amd64", elfMachine: 62 },
  { arch: "arm64", elfMachine: 183 },
] as const;

/** The values each chart needs to render, and a release to render it as. */
const charts = [
  { chart: "vhost-broker", set: { "settings.openbao-address": "https://openbao.example:8200" } },
  { chart: "target-cluster-access", set: { assignedNamespaces: "{tenant-a,tenant-b}" } },
] as const;

const descriptor = z.object({ mediaType: z.string(), digest: z.string(), size: z.number() });
const index = z.object({
  schemaVersion: z.literal(2),
  manifests: z.array(descriptor.extend({ annotations: z.record(z.string(), z.string()).optional() })),
});
const manifest = z.object({ config: descriptor, layers: z.array(descriptor) });
const config = z.object({
  architecture: z.string(),
  os: z.string(),
  config: z.object({ Env: z.array(z.string()), Labels: z.record(z.string(), z.string()) }),
});

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

const gitHead = async (): Promise<string> =>
  (await run("git", ["-C", root, "rev-parse", "HEAD"])).stdout.trim();

/** The first bytes of a file in a gzipped layer tar, read from the stream without unpacking the rest. */
async function headOfLayerFile(layer: string, path: string, length: number): Promise<Buffer> {
  const tar = spawn("tar", ["-xzOf", layer, path], { stdio: ["ignore", "pipe", "ignore"] });
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of tar.stdout as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    read += chunk.length;
    if (read >= length) break;
  }
  tar.kill();
  return Buffer.concat(chunks).subarray(0, length);
}

describe("scripts/release.sh", () => {
  const out = mkdtempSync(`${tmpdir()}/vhost-broker-release-`);
  const unpacked = mkdtempSync(`${tmpdir()}/vhost-broker-release-oci-`);
  const helm = helmBinary();
  const kubeVersion = localKubeVersion();
  // Others may commit while the script runs: the image is stamped with HEAD at one of these moments.
  let heads: string[] = [];

  beforeAll(async () => {
    const before = await gitHead();
    const started = Date.now();
    await run("bash", [`${root}scripts/release.sh`], {
      cwd: root,
      env: { ...process.env, RELEASE_DIR: out },
      maxBuffer: 16 * 1024 * 1024,
    });
    console.log(`scripts/release.sh took ${Math.round((Date.now() - started) / 1000)}s`);
    heads = [before, await gitHead()];
  }, 600_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
    rmSync(unpacked, { recursive: true, force: true });
  });

  it("writes both charts, an image archive per architecture and SHA256SUMS, which verifies them", async () => {
    const artifacts = [
      ...charts.map(({ chart }) => `${chart}-${version}.tgz`),
      ...architectures.map(({ arch }) => `vhost-broker-${version}-linux-${arch}.oci.tar`),
    ].sort();
    expect(readdirSync(out).sort()).toEqual([...artifacts, "SHA256SUMS"].sort());
    const sums = readFileSync(`${out}/SHA256SUMS`, "utf8").trim().split("\n");
    expect(sums.map((line) => line.slice(66)).sort()).toEqual(artifacts);
    for (const line of sums) {
      const [hash, file] = [line.slice(0, 64), line.slice(66)];
      expect(sha256(readFileSync(`${out}/${file}`)), file).toBe(hash);
    }
    // As a user verifies them.
    await run("sha256sum", ["--check", "--strict", "SHA256SUMS"], { cwd: out });
  });

  it.each(charts)("packages $chart as a chart that lints and renders what deploy/ renders", async (c) => {
    if (!helm || !kubeVersion) throw new Error("helm is not built; run scripts/localenv.sh up");
    const archive = `${out}/${c.chart}-${version}.tgz`;
    const set = Object.entries(c.set).flatMap(([key, value]) => ["--set", `${key}=${value}`]);
    await run(helm, ["lint", "--strict", archive, "--kube-version", kubeVersion, ...set]);
    const release = { release: "release", namespace: "release-test" };
    const { stdout: packaged } = await run(
      helm,
      [
        "template",
        release.release,
        archive,
        "--namespace",
        release.namespace,
        "--kube-version",
        kubeVersion,
        ...set,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
    expect(packaged).toBe(await renderChart(c.chart, { ...release, set: { ...c.set } }));
  });

  it.each(architectures)(
    "archives the $arch image: one image tagged with the version, for linux/$arch, from this commit",
    async ({ arch, elfMachine }) => {
      const dir = `${unpacked}/${arch}`;
      mkdirSync(dir);
      await run("tar", ["-xf", `${out}/vhost-broker-${version}-linux-${arch}.oci.tar`, "-C", dir]);
      expect(JSON.parse(readFileSync(`${dir}/oci-layout`, "utf8"))).toEqual({ imageLayoutVersion: "1.0.0" });
      // A blob is named by its digest: reading one checks it.
      const blob = (digest: string): Buffer => {
        const bytes = readFileSync(`${dir}/blobs/${digest.replace(":", "/")}`);
        expect(`sha256:${sha256(bytes)}`, digest).toBe(digest);
        return bytes;
      };
      const images = index.parse(JSON.parse(readFileSync(`${dir}/index.json`, "utf8"))).manifests;
      expect(images.map((m) => m.annotations?.["org.opencontainers.image.ref.name"])).toEqual([version]);
      const image = manifest.parse(JSON.parse(blob(images[0]?.digest ?? "").toString("utf8")));
      const {
        architecture,
        os,
        config: settings,
      } = config.parse(JSON.parse(blob(image.config.digest).toString("utf8")));
      expect({ architecture, os }).toEqual({ architecture: arch, os: "linux" });

      const revision = settings.Labels["org.opencontainers.image.revision"];
      expect(heads).toContain(revision);
      const chart = yaml.parse(readFileSync(`${root}deploy/vhost-broker/Chart.yaml`, "utf8")) as {
        home: string;
      };
      expect(settings.Labels).toMatchObject({
        "org.opencontainers.image.version": version,
        "org.opencontainers.image.source": chart.home,
      });
      // What src/runtime/base/build.ts reads: vhost_broker_build_info names the commit.
      expect(settings.Env).toContain(`VHOST_BROKER_REVISION=${revision}`);

      expect(image.layers).toHaveLength(1);
      const layer = image.layers[0]?.digest ?? "";
      blob(layer);
      const elf = await headOfLayerFile(`${dir}/blobs/${layer.replace(":", "/")}`, "usr/local/bin/node", 20);
      expect(elf.subarray(0, 4).toString("latin1")).toBe("\x7fELF");
      expect(elf.readUInt16LE(18)).toBe(elfMachine);
    },
  );
});
