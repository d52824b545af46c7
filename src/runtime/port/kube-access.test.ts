import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { clientNodeAccess, clientNodeReason, tlsOptions, userHeaders } from "./kube-access.ts";
import { KubeconfigError, type Kubeconfig } from "./kubeconfig.ts";

const folder = mkdtempSync(join(tmpdir(), "vb-kube-access-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

function config(cluster: Partial<Kubeconfig["cluster"]>, user: Partial<Kubeconfig["user"]>): Kubeconfig {
  return {
    source: "kubeconfig k",
    context: "c",
    cluster: { name: "c", server: "https://127.0.0.1:6443", insecureSkipTlsVerify: false, ...cluster },
    user: { name: "u", ...user },
  };
}

const b64 = (s: string) => Buffer.from(s).toString("base64");

describe("userHeaders", () => {
  it("sends a token as a bearer, with impersonation", async () => {
    expect(await userHeaders({ name: "u", token: "t1", impersonate: "carol" })).toEqual({
      authorization: "Bearer t1",
      "impersonate-user": "carol",
    });
  });

  it("reads the token file for every request, so a rotated token is used at once", async () => {
    const tokenFile = join(folder, "token");
    writeFileSync(tokenFile, "first\n");
    const user = { name: "u", token: "ignored", tokenFile };
    expect(await userHeaders(user)).toEqual({ authorization: "Bearer first" });
    writeFileSync(tokenFile, "second");
    expect(await userHeaders(user)).toEqual({ authorization: "Bearer second" });
  });

  it("sends a username and password as basic auth, and nothing for an anonymous user", async () => {
    expect(await userHeaders({ name: "u", username: "admin", password: "pw" })).toEqual({
      authorization: `Basic ${b64("admin:pw")}`,
    });
    expect(await userHeaders({ name: "" })).toEqual({});
  });
});

describe("tlsOptions", () => {
  it("decodes embedded data and applies the cluster's verification settings", () => {
    const options = tlsOptions(
      config(
        { certificateAuthorityData: b64("CA"), insecureSkipTlsVerify: true, tlsServerName: "api" },
        { clientCertificateData: b64("CERT"), clientKeyData: b64("KEY") },
      ),
    );
    expect(options).toEqual({
      ca: Buffer.from("CA"),
      cert: Buffer.from("CERT"),
      key: Buffer.from("KEY"),
      rejectUnauthorized: false,
      servername: "api",
    });
    expect(tlsOptions(config({}, {}))).toEqual({});
  });

  it("reads named files, and names the field and the file it cannot read", () => {
    const ca = join(folder, "ca.crt");
    writeFileSync(ca, "FROM FILE");
    expect(tlsOptions(config({ certificateAuthority: ca }, {})).ca).toEqual(Buffer.from("FROM FILE"));
    const missing = join(folder, "nope.key");
    const run = () => tlsOptions(config({}, { clientCertificate: ca, clientKey: missing }));
    expect(run).toThrow(KubeconfigError);
    expect(run).toThrow(`kubeconfig k: user "u" client-key ${missing} cannot be read: ENOENT`);
  });
});

describe("the choice of client", () => {
  it("leaves exec, auth-provider and SOCKS proxies to client-node, everything else to its own", () => {
    expect(clientNodeReason(config({}, { exec: { command: "x" } }))).toBe("exec credentials");
    expect(clientNodeReason(config({}, { authProvider: { name: "oidc" } }))).toBe("an auth-provider");
    expect(clientNodeReason(config({ proxyUrl: "socks5://p:1080" }, {}))).toBe("a SOCKS proxy");
    expect(clientNodeReason(config({ proxyUrl: "http://p:3128" }, { token: "t" }))).toBeUndefined();
    expect(clientNodeReason(config({}, { clientCertificateData: "x", clientKeyData: "y" }))).toBeUndefined();
  });

  it("authenticates an exec user through client-node, running the plugin", async () => {
    const plugin = join(folder, "credential-plugin.sh");
    const credential = {
      apiVersion: "client.authentication.k8s.io/v1",
      kind: "ExecCredential",
      status: { token: "from-the-plugin" },
    };
    writeFileSync(plugin, `#!/bin/sh\necho '${JSON.stringify(credential)}'\n`);
    chmodSync(plugin, 0o755);
    const access = await clientNodeAccess(
      config({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command: plugin } }),
    );
    try {
      expect(access.server).toBe("https://127.0.0.1:6443");
      expect(await access.headers()).toMatchObject({ Authorization: "Bearer from-the-plugin" });
    } finally {
      await access.close();
    }
  });
});
