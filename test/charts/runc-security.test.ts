// How the image test turns a pod template's security context into runc's: the container's context
// over the pod's, capabilities after drop and add, emptyDirs as tmpfs, and no silent root.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { describe, expect, it } from "vitest";
import { configureBundle, securityFromPodTemplate } from "../../harness/operator/runc-container.ts";

const template = (pod: object, container: object) => ({
  spec: {
    securityContext: pod,
    containers: [
      {
        name: "app",
        securityContext: container,
        volumeMounts: [
          { name: "tmp", mountPath: "/tmp" },
          { name: "ca", mountPath: "/etc/ca" },
        ],
      },
    ],
    volumes: [
      { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
      { name: "ca", configMap: { name: "ca" } },
    ],
  },
});

describe("securityFromPodTemplate", () => {
  it("merges the container's context over the pod's and keeps only emptyDirs", () => {
    expect(
      securityFromPodTemplate(
        template(
          { runAsUser: 65532, runAsGroup: 1000, readOnlyRootFilesystem: false },
          { readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
        ),
        "app",
      ),
    ).toEqual({
      uid: 65532,
      gid: 1000,
      readOnlyRoot: true,
      noNewPrivileges: true,
      capabilities: [],
      emptyDirs: ["/tmp"],
    });
  });

  it("keeps the default capabilities not dropped, adds the added ones", () => {
    const s = securityFromPodTemplate(
      template({ runAsUser: 10 }, { capabilities: { drop: ["KILL"], add: ["NET_RAW"] } }),
      "app",
    );
    expect(s.capabilities).toEqual(["CAP_AUDIT_WRITE", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW"]);
    expect([s.gid, s.readOnlyRoot, s.noNewPrivileges]).toEqual([10, false, false]);
  });

  it("refuses a template that runs as root or as the image's user", () => {
    expect(() => securityFromPodTemplate(template({}, {}), "app")).toThrow(/root or as the image's user/);
    expect(() => securityFromPodTemplate(template({ runAsUser: 0 }, {}), "app")).toThrow(/root/);
    expect(() => securityFromPodTemplate(template({ runAsUser: 1 }, {}), "other")).toThrow(
      /no container other/,
    );
  });
});

describe("configureBundle", () => {
  it("writes the entrypoint with the args, the security, host network, tmpfs and read-only binds", () => {
    const dir = mkdtempSync(`${tmpdir()}/bundle-test-`);
    try {
      const caps = ["CAP_KILL"];
      writeFileSync(
        `${dir}/config.json`,
        JSON.stringify({
          process: {
            terminal: true,
            user: { uid: 1, gid: 1 },
            args: ["/bin/app", "run"],
            env: ["PATH=/bin"],
            capabilities: { bounding: caps, effective: caps },
            noNewPrivileges: false,
          },
          root: { path: "rootfs" },
          mounts: [],
          linux: { namespaces: [{ type: "pid" }, { type: "network" }, { type: "mount" }] },
        }),
      );
      configureBundle(
        dir,
        { uid: 7, gid: 8, readOnlyRoot: true, noNewPrivileges: true, capabilities: [], emptyDirs: ["/tmp"] },
        { args: ["--a=1"], env: { X: "y" }, readOnlyBinds: ["/etc/kubeconfig"] },
      );
      expect(JSON.parse(readFileSync(`${dir}/config.json`, "utf8"))).toEqual({
        process: {
          terminal: false,
          user: { uid: 7, gid: 8 },
          args: ["/bin/app", "run", "--a=1"],
          env: ["PATH=/bin", "X=y"],
          capabilities: { bounding: [], effective: [] },
          noNewPrivileges: true,
        },
        root: { path: "rootfs", readonly: true },
        mounts: [
          {
            destination: "/tmp",
            type: "tmpfs",
            source: "tmpfs",
            options: ["nosuid", "nodev", "mode=1777", "size=64m"],
          },
          {
            destination: "/etc/kubeconfig",
            type: "bind",
            source: "/etc/kubeconfig",
            options: ["rbind", "ro"],
          },
        ],
        linux: { namespaces: [{ type: "pid" }, { type: "mount" }] },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
