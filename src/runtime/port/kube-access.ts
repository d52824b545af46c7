import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { Agent, ProxyAgent, type Dispatcher } from "undici";
import type * as k8s from "@kubernetes/client-node";
import { KubeconfigError, type Kubeconfig } from "./kubeconfig.ts";

// How requests reach one cluster: its server, one connection pool with the cluster's TLS options,
// and the headers that authenticate the user. Users whose credentials come from a program (exec) or
// a cloud auth provider, and SOCKS proxies, are left to @kubernetes/client-node, loaded only then:
// the package costs the process more memory than everything else it loads.

export interface KubeAccess {
  readonly server: string;
  readonly dispatcher: Dispatcher;
  /** The headers that authenticate the next request. */
  headers(): Promise<Record<string, string>>;
  /** Ends every connection, failing the requests in flight. */
  close(): Promise<void>;
}

/** Why this kubeconfig needs client-node, or undefined when the project's own client serves it. */
export function clientNodeReason(config: Kubeconfig): string | undefined {
  if (config.user.exec) return "exec credentials";
  if (config.user.authProvider) return "an auth-provider";
  if (config.cluster.proxyUrl?.startsWith("socks")) return "a SOCKS proxy";
  return undefined;
}

/** The authentication headers of a user without exec or auth-provider. */
export async function userHeaders(user: Kubeconfig["user"]): Promise<Record<string, string>> {
  const headers: Record<string, string> = {};
  const token = user.tokenFile ? (await readFile(user.tokenFile, "utf8")).trim() : user.token;
  if (token) headers.authorization = `Bearer ${token}`;
  else if (user.username !== undefined) {
    const basic = Buffer.from(`${user.username}:${user.password ?? ""}`).toString("base64");
    headers.authorization = `Basic ${basic}`;
  }
  if (user.impersonate) headers["impersonate-user"] = user.impersonate;
  return headers;
}

function fileOrData(
  config: Kubeconfig,
  field: string,
  file: string | undefined,
  data: string | undefined,
): Buffer | undefined {
  if (file !== undefined) {
    try {
      return readFileSync(file);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new KubeconfigError(`${config.source}: ${field} ${file} cannot be read: ${reason}`);
    }
  }
  return data === undefined ? undefined : Buffer.from(data, "base64");
}

/** The TLS options of the connections to the cluster; files are read here, once. */
export function tlsOptions(config: Kubeconfig) {
  const { cluster, user } = config;
  const ca = fileOrData(
    config,
    `cluster "${cluster.name}" certificate-authority`,
    cluster.certificateAuthority,
    cluster.certificateAuthorityData,
  );
  const cert = fileOrData(
    config,
    `user "${user.name}" client-certificate`,
    user.clientCertificate,
    user.clientCertificateData,
  );
  const key = fileOrData(config, `user "${user.name}" client-key`, user.clientKey, user.clientKeyData);
  return {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(cluster.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
    ...(cluster.tlsServerName ? { servername: cluster.tlsServerName } : {}),
  };
}

// Probes of half-open connections well before a cloud load balancer's idle timeout (often 60 s).
const keepAlive = { keepAlive: true, keepAliveInitialDelay: 30_000 };

/** The project's own access: one undici pool per cluster. Throws when a named file cannot be read. */
export function directAccess(config: Kubeconfig): KubeAccess {
  const tls = tlsOptions(config);
  const proxy = config.cluster.proxyUrl;
  const dispatcher = proxy
    ? new ProxyAgent({ uri: proxy, requestTls: tls })
    : new Agent({ connect: { ...tls, ...keepAlive } });
  return {
    server: config.cluster.server,
    dispatcher,
    headers: () => userHeaders(config.user),
    close: () => dispatcher.destroy(),
  };
}

/** Access through client-node, for the users and proxies only it can serve. */
export async function clientNodeAccess(config: Kubeconfig): Promise<KubeAccess> {
  const k8sModule = await import("@kubernetes/client-node");
  const { cluster, user } = config;
  const clientCluster: k8s.Cluster = {
    name: cluster.name,
    server: cluster.server,
    caFile: cluster.certificateAuthority,
    caData: cluster.certificateAuthorityData,
    skipTLSVerify: cluster.insecureSkipTlsVerify,
    tlsServerName: cluster.tlsServerName,
    proxyUrl: cluster.proxyUrl,
  };
  const clientUser: k8s.User = {
    name: user.name || "user",
    certFile: user.clientCertificate,
    certData: user.clientCertificateData,
    keyFile: user.clientKey,
    keyData: user.clientKeyData,
    token: user.tokenFile ? readFileSync(user.tokenFile, "utf8").trim() : user.token,
    username: user.username,
    password: user.password,
    impersonateUser: user.impersonate,
    exec: user.exec,
    authProvider: user.authProvider,
  };
  const kubeConfig = new k8sModule.KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [clientCluster],
    users: [clientUser],
    contexts: [{ name: config.context, cluster: cluster.name, user: clientUser.name }],
    currentContext: config.context,
  });
  const authenticate = async () => {
    const context = new k8sModule.RequestContext(cluster.server, "GET");
    await kubeConfig.applySecurityAuthentication(context);
    return context;
  };
  // client-node builds a new pool for every request it authenticates; the first one serves them all.
  const dispatcher = ((await authenticate()).getDispatcher() as Dispatcher | undefined) ?? new Agent();
  return {
    server: cluster.server,
    dispatcher,
    headers: async () => ({ ...(await authenticate()).getHeaders() }),
    close: () => dispatcher.destroy(),
  };
}
