import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  KubeconfigError,
  inClusterKubeconfig,
  loadDefaultKubeconfig,
  loadKubeconfigFiles,
  parseKubeconfig,
} from "./kubeconfig.ts";

const folder = mkdtempSync(join(tmpdir(), "vb-kubeconfig-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(folder, name);
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
  return path;
}

const twoContexts = `apiVersion: v1
kind: Config
clusters:
- name: dev
  cluster:
    server: https://dev.example:6443/
    certificate-authority: pki/ca.crt
    tls-server-name: api.dev
- name: prod
  cluster: {server: "https://prod.example", insecure-skip-tls-verify: true, proxy-url: "http://proxy:3128"}
users:
- name: alice
  user:
    client-certificate: pki/alice.crt
    client-key: /abs/alice.key
- name: bob
  user: {token: s3cr3t-token, as: carol}
contexts:
- name: dev
  context: {cluster: dev, user: alice, namespace: x}
- name: prod
  context: {cluster: prod, user: bob}
current-context: dev
preferences: {}
`;

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(KubeconfigError);
    return (error as Error).message;
  }
  throw new Error("no error");
}

describe("parseKubeconfig", () => {
  it("selects the current context's cluster and user", () => {
    const config = parseKubeconfig(twoContexts, "kubeconfig a");
    expect(config).toEqual({
      source: "kubeconfig a",
      context: "dev",
      cluster: {
        name: "dev",
        server: "https://dev.example:6443",
        certificateAuthority: "pki/ca.crt",
        insecureSkipTlsVerify: false,
        tlsServerName: "api.dev",
      },
      user: { name: "alice", clientCertificate: "pki/alice.crt", clientKey: "/abs/alice.key" },
    });
  });

  it("reads tokens, impersonation, insecure clusters and proxies", () => {
    const config = parseKubeconfig(twoContexts.replace("current-context: dev", "current-context: prod"), "a");
    expect(config.cluster).toMatchObject({
      server: "https://prod.example",
      insecureSkipTlsVerify: true,
      proxyUrl: "http://proxy:3128",
    });
    expect(config.user).toMatchObject({ name: "bob", token: "s3cr3t-token", impersonate: "carol" });
  });

  it("resolves relative file names against the given folder only", () => {
    const config = parseKubeconfig(twoContexts, "a", "/etc/kube");
    expect(config.cluster.certificateAuthority).toBe("/etc/kube/pki/ca.crt");
    expect(config.user.clientCertificate).toBe("/etc/kube/pki/alice.crt");
    expect(config.user.clientKey).toBe("/abs/alice.key");
  });

  it("keeps exec and auth-provider users for the caller to judge", () => {
    const exec = twoContexts.replace(
      "user: {token: s3cr3t-token, as: carol}",
      "user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}}",
    );
    const config = parseKubeconfig(exec.replace("current-context: dev", "current-context: prod"), "a");
    expect(config.user.exec).toEqual({ apiVersion: "client.authentication.k8s.io/v1", command: "aws" });
  });

  it("allows a context without a user (anonymous)", () => {
    const text = `clusters: [{name: c, cluster: {server: "http://127.0.0.1:8080"}}]
contexts: [{name: c, context: {cluster: c}}]
current-context: c
`;
    expect(parseKubeconfig(text, "a").user).toEqual({ name: "" });
  });

  it("names the source and the field of what is wrong, never a value", () => {
    const cases: [string, string][] = [
      ["{not yaml", "kubeconfig x: not YAML: "],
      [twoContexts.replace("current-context: dev", ""), "kubeconfig x: current-context is not set"],
      [
        twoContexts.replace("current-context: dev", "current-context: nope"),
        'kubeconfig x: current-context "nope" is not in contexts',
      ],
      [
        twoContexts.replace("context: {cluster: dev,", "context: {cluster: gone,"),
        'kubeconfig x: context "dev" names cluster "gone", which is not in clusters',
      ],
      [
        twoContexts.replace("user: alice, namespace", "user: zed, namespace"),
        'kubeconfig x: context "dev" names user "zed", which is not in users',
      ],
      [
        twoContexts.replace("https://dev.example:6443/", "ftp://dev"),
        "kubeconfig x: clusters[0].cluster.server is not an http(s) URL",
      ],
      [
        twoContexts.replace("s3cr3t-token", "12345"),
        "kubeconfig x: users[1].user.token expected string, received number",
      ],
      [
        twoContexts.replace("    client-key: /abs/alice.key\n", ""),
        'kubeconfig x: user "alice" has a client certificate without a key',
      ],
      [
        twoContexts.replace("client-certificate: pki/alice.crt", "client-certificate-data: s3cr3t-token!"),
        "kubeconfig x: users[0].user.client-certificate-data is not base64",
      ],
    ];
    for (const [text, message] of cases) {
      const got = errorOf(() => parseKubeconfig(text, "kubeconfig x"));
      expect(got.startsWith(message), `${got} should start with ${message}`).toBe(true);
      expect(got).not.toContain("s3cr3t");
    }
  });

  it("never quotes the document in a YAML error", () => {
    const message = errorOf(() =>
      parseKubeconfig("users:\n- name: a\n  user: {token: s3cr3t, : }\n  : x", "a"),
    );
    expect(message).not.toContain("s3cr3t");
    expect(message).not.toContain("\n");
  });
});

describe("loadKubeconfigFiles", () => {
  it("resolves each file's relative names against its own folder", () => {
    const path = file("one/config", twoContexts);
    const config = loadKubeconfigFiles([path]);
    expect(config.source).toBe(`kubeconfig ${path}`);
    expect(config.cluster.certificateAuthority).toBe(join(folder, "one/pki/ca.crt"));
    expect(config.user.clientCertificate).toBe(join(folder, "one/pki/alice.crt"));
  });

  it("merges several files as kubectl does: first current-context, first entry of a name", () => {
    const first = file(
      "a/config",
      `clusters: [{name: c, cluster: {server: "https://first", certificate-authority: ca.crt}}]
users: [{name: u, user: {tokenFile: token}}]
`,
    );
    const second = file(
      "b/config",
      `clusters: [{name: c, cluster: {server: "https://second"}}]
users: [{name: u, user: {token: other}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`,
    );
    const config = loadKubeconfigFiles([first, second]);
    expect(config.cluster).toMatchObject({
      server: "https://first",
      certificateAuthority: join(folder, "a/ca.crt"),
    });
    expect(config.user).toEqual({ name: "u", tokenFile: join(folder, "a/token") });
  });

  it("names a file that cannot be read", () => {
    const missing = join(folder, "missing");
    expect(errorOf(() => loadKubeconfigFiles([missing]))).toBe(
      `kubeconfig ${missing}: cannot be read: ENOENT`,
    );
  });
});

describe("the in-cluster and the default kubeconfig", () => {
  const serviceAccount = join(folder, "sa");
  file("sa/token", "t");

  it("reads the service host and port, the service account's CA and token file", () => {
    const config = inClusterKubeconfig(
      { KUBERNETES_SERVICE_HOST: "fd00::1", KUBERNETES_SERVICE_PORT: "443" },
      serviceAccount,
    );
    expect(config.cluster).toEqual({
      name: "in-cluster",
      server: "https://[fd00::1]:443",
      certificateAuthority: join(serviceAccount, "ca.crt"),
      insecureSkipTlsVerify: false,
    });
    expect(config.user).toEqual({ name: "in-cluster", tokenFile: join(serviceAccount, "token") });
    expect(errorOf(() => inClusterKubeconfig({}, serviceAccount))).toContain("KUBERNETES_SERVICE_HOST");
  });

  it("takes KUBECONFIG first, then ~/.kube/config, then the in-cluster configuration", () => {
    const listed = file("listed/config", twoContexts);
    const home = join(folder, "home");
    const inPod = { KUBERNETES_SERVICE_HOST: "10.0.0.1", KUBERNETES_SERVICE_PORT: "443" };
    const load = (env: NodeJS.ProcessEnv) =>
      loadDefaultKubeconfig({ env, home, serviceAccountFolder: serviceAccount });

    expect(load({ ...inPod, KUBECONFIG: `${delimiter}${listed}` }).source).toBe(`kubeconfig ${listed}`);
    expect(load(inPod).source).toBe("the in-cluster configuration");
    file("home/.kube/config", twoContexts);
    expect(load({ ...inPod, KUBECONFIG: "" }).source).toBe(`kubeconfig ${join(home, ".kube/config")}`);
  });

  it("says where it looked when there is none", () => {
    const message = errorOf(() =>
      loadDefaultKubeconfig({
        env: {},
        home: join(folder, "nobody"),
        serviceAccountFolder: join(folder, "none"),
      }),
    );
    expect(message).toContain(join(folder, "nobody/.kube/config"));
    expect(message).toContain(join(folder, "none/token"));
  });
});
