import { existsSync, readFileSync } from "node:fs";
import { isIPv6 } from "node:net";
import { homedir } from "node:os";
import { delimiter, dirname, isAbsolute, join } from "node:path";
import YAML from "yaml";
import { z } from "zod";

// The kubeconfig as kubectl reads it, down to what a client needs: the current context's cluster and
// user. Files named in it are resolved against the folder of the kubeconfig that names them. Also the
// in-cluster configuration of a Pod, and kubectl's search order for the default one.

export class KubeconfigError extends Error {
  override name = "KubeconfigError";
}

export interface KubeconfigCluster {
  name: string;
  /** Without a trailing slash. */
  server: string;
  certificateAuthority?: string;
  certificateAuthorityData?: string;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  proxyUrl?: string;
}

export interface KubeconfigUser {
  name: string;
  clientCertificate?: string;
  clientCertificateData?: string;
  clientKey?: string;
  clientKeyData?: string;
  token?: string;
  /** Read again for every request, so a rotated (projected service-account) token is used at once. */
  tokenFile?: string;
  username?: string;
  password?: string;
  /** `as`: the user to impersonate. */
  impersonate?: string;
  exec?: Record<string, unknown>;
  authProvider?: Record<string, unknown>;
}

/** The cluster and the user of a kubeconfig's current context. */
export interface Kubeconfig {
  /** Where it came from, for messages: the file(s), a Secret's name, "the in-cluster configuration". */
  source: string;
  context: string;
  cluster: KubeconfigCluster;
  user: KubeconfigUser;
}

const serviceAccountFolder = "/var/run/secrets/kubernetes.io/serviceaccount";

const base64 = z.string().regex(/^[A-Za-z0-9+/=\s]*$/, "is not base64");
const httpUrl = z
  .string()
  .refine((s) => URL.canParse(s) && /^https?:$/.test(new URL(s).protocol), "is not an http(s) URL");

const clusterSchema = z.object({
  server: httpUrl,
  "certificate-authority": z.string().min(1).optional(),
  "certificate-authority-data": base64.optional(),
  "insecure-skip-tls-verify": z.boolean().optional(),
  "tls-server-name": z.string().min(1).optional(),
  "proxy-url": z.string().min(1).optional(),
});

const userSchema = z.object({
  "client-certificate": z.string().min(1).optional(),
  "client-certificate-data": base64.optional(),
  "client-key": z.string().min(1).optional(),
  "client-key-data": base64.optional(),
  token: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
  username: z.string().optional(),
  password: z.string().optional(),
  as: z.string().min(1).optional(),
  exec: z.record(z.string(), z.unknown()).optional(),
  "auth-provider": z.record(z.string(), z.unknown()).optional(),
});

const documentSchema = z.object({
  clusters: z.array(z.object({ name: z.string().min(1), cluster: clusterSchema })).nullish(),
  users: z.array(z.object({ name: z.string().min(1), user: userSchema.nullish() })).nullish(),
  contexts: z
    .array(
      z.object({
        name: z.string().min(1),
        context: z.object({ cluster: z.string().min(1), user: z.string().optional() }),
      }),
    )
    .nullish(),
  "current-context": z.string().optional(),
});

type Document = z.infer<typeof documentSchema>;

function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
}

/** Parses and checks one kubeconfig document. Messages name the field, never a value. */
function readDocument(text: string, source: string, folder: string | undefined): Document {
  let raw: unknown;
  try {
    raw = YAML.parse(text);
  } catch (error) {
    // The first line only: the parser's further lines quote the document, which holds credentials.
    const reason = error instanceof Error ? error.message.split("\n")[0] : "invalid";
    throw new KubeconfigError(`${source}: not YAML: ${reason}`);
  }
  const result = documentSchema.safeParse(raw ?? {});
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = fieldPath(issue.path) || "the document";
    throw new KubeconfigError(`${source}: ${where} ${issue.message.replace(/^Invalid input: /, "")}`);
  }
  return folder === undefined ? result.data : resolvePaths(result.data, folder);
}

function resolvePaths(document: Document, folder: string): Document {
  const at = (file: string | undefined) =>
    file === undefined || isAbsolute(file) ? file : join(folder, file);
  return {
    ...document,
    clusters: document.clusters?.map((c) => ({
      ...c,
      cluster: { ...c.cluster, "certificate-authority": at(c.cluster["certificate-authority"]) },
    })),
    users: document.users?.map((u) => ({
      ...u,
      user: u.user && {
        ...u.user,
        "client-certificate": at(u.user["client-certificate"]),
        "client-key": at(u.user["client-key"]),
        tokenFile: at(u.user.tokenFile),
      },
    })),
  };
}

/** kubectl's merge of several files: the first current-context set wins, so does a name's first entry. */
function merge(documents: Document[]): Document {
  const firstByName = <T extends { name: string }>(lists: (T[] | null | undefined)[]): T[] => {
    const seen = new Map<string, T>();
    for (const item of lists.flatMap((l) => l ?? [])) if (!seen.has(item.name)) seen.set(item.name, item);
    return [...seen.values()];
  };
  return {
    clusters: firstByName(documents.map((d) => d.clusters)),
    users: firstByName(documents.map((d) => d.users)),
    contexts: firstByName(documents.map((d) => d.contexts)),
    "current-context": documents.map((d) => d["current-context"]).find((c) => c),
  };
}

function select(document: Document, source: string): Kubeconfig {
  const contextName = document["current-context"];
  if (!contextName) throw new KubeconfigError(`${source}: current-context is not set`);
  const context = document.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) throw new KubeconfigError(`${source}: current-context "${contextName}" is not in contexts`);
  const cluster = document.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster) {
    throw new KubeconfigError(
      `${source}: context "${contextName}" names cluster "${context.cluster}", which is not in clusters`,
    );
  }
  const userName = context.user ?? "";
  const entry = userName ? document.users?.find((u) => u.name === userName) : undefined;
  if (userName && !entry) {
    throw new KubeconfigError(
      `${source}: context "${contextName}" names user "${userName}", which is not in users`,
    );
  }
  const user = entry?.user ?? {};
  const hasCert = user["client-certificate"] !== undefined || user["client-certificate-data"] !== undefined;
  const hasKey = user["client-key"] !== undefined || user["client-key-data"] !== undefined;
  if (hasCert !== hasKey) {
    throw new KubeconfigError(
      `${source}: user "${userName}" has a client ${hasCert ? "certificate without a key" : "key without a certificate"}`,
    );
  }
  return {
    source,
    context: contextName,
    cluster: {
      name: context.cluster,
      server: cluster.server.replace(/\/+$/, ""),
      certificateAuthority: cluster["certificate-authority"],
      certificateAuthorityData: cluster["certificate-authority-data"],
      insecureSkipTlsVerify: cluster["insecure-skip-tls-verify"] ?? false,
      tlsServerName: cluster["tls-server-name"],
      proxyUrl: cluster["proxy-url"],
    },
    user: {
      name: userName,
      clientCertificate: user["client-certificate"],
      clientCertificateData: user["client-certificate-data"],
      clientKey: user["client-key"],
      clientKeyData: user["client-key-data"],
      token: user.token,
      tokenFile: user.tokenFile,
      username: user.username,
      password: user.password,
      impersonate: user.as,
      exec: user.exec,
      authProvider: user["auth-provider"],
    },
  };
}

/**
 * A kubeconfig from its text. With `folder`, relative file names are resolved against it; without,
 * the text comes from no file (a Secret) and is read as it is.
 */
export function parseKubeconfig(text: string, source: string, folder?: string): Kubeconfig {
  return select(readDocument(text, source, folder), source);
}

function readText(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new KubeconfigError(`kubeconfig ${path}: cannot be read: ${reason}`);
  }
}

/** One kubeconfig file, or several (kubectl's KUBECONFIG list) merged. */
export function loadKubeconfigFiles(paths: string[]): Kubeconfig {
  const documents = paths.map((p) => readDocument(readText(p), `kubeconfig ${p}`, dirname(p)));
  return select(merge(documents), `kubeconfig ${paths.join(delimiter)}`);
}

/** The configuration a Pod gets from its service account. */
export function inClusterKubeconfig(
  env: NodeJS.ProcessEnv = process.env,
  folder = serviceAccountFolder,
): Kubeconfig {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  const source = "the in-cluster configuration";
  if (!host || !port) {
    throw new KubeconfigError(`${source}: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set`);
  }
  return {
    source,
    context: "in-cluster",
    cluster: {
      name: "in-cluster",
      server: `https://${isIPv6(host) ? `[${host}]` : host}:${port}`,
      certificateAuthority: join(folder, "ca.crt"),
      insecureSkipTlsVerify: false,
    },
    user: { name: "in-cluster", tokenFile: join(folder, "token") },
  };
}

export interface DefaultKubeconfigOptions {
  env?: NodeJS.ProcessEnv;
  home?: string;
  serviceAccountFolder?: string;
}

/**
 * kubectl's order: the files in KUBECONFIG, else ~/.kube/config if it exists, else the in-cluster
 * configuration if the Pod has a service-account token.
 */
export function loadDefaultKubeconfig(options: DefaultKubeconfigOptions = {}): Kubeconfig {
  const env = options.env ?? process.env;
  const folder = options.serviceAccountFolder ?? serviceAccountFolder;
  const files = (env.KUBECONFIG ?? "").split(delimiter).filter((f) => f !== "");
  if (files.length > 0) return loadKubeconfigFiles(files);
  const home = join(options.home ?? homedir(), ".kube", "config");
  if (existsSync(home)) return loadKubeconfigFiles([home]);
  if (existsSync(join(folder, "token"))) return inClusterKubeconfig(env, folder);
  throw new KubeconfigError(
    `no kubeconfig: none given, KUBECONFIG is empty, ${home} does not exist and ${folder}/token neither (not in a Pod)`,
  );
}
