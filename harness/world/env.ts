import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { z } from "zod";

// The variables `scripts/localenv.sh up` exports in .localenv/env.sh, read and checked once.
const schema = z.object({
  KUBECONFIG: z.string().min(1),
  TARGET_KUBECONFIG: z.string().min(1),
  KUBECTL: z.string().min(1),
  RABBITMQ_URL: z.string().startsWith("amqp://"),
  RABBITMQ_MANAGEMENT_URL: z.url(),
  RABBITMQ_ADMIN_USERNAME: z.string().min(1),
  RABBITMQ_ADMIN_PASSWORD: z.string().min(1),
  RABBITMQCTL: z.string().min(1),
  /** Each broker's RabbitMQ version, as its management API reports it. */
  RABBITMQ_VERSION: z.string().min(1),
  /** The second broker, a node of its own (the lane per broker's tests and benchmark phases). */
  RABBITMQ_2_URL: z.string().startsWith("amqp://"),
  RABBITMQ_2_MANAGEMENT_URL: z.url(),
  RABBITMQ_2_ADMIN_USERNAME: z.string().min(1),
  RABBITMQ_2_ADMIN_PASSWORD: z.string().min(1),
  RABBITMQ_2_CTL: z.string().min(1),
  RABBITMQ_2_VERSION: z.string().min(1),
  /** A third broker, of the other 4.x release the environment carries (4.0). */
  RABBITMQ_40_URL: z.string().startsWith("amqp://"),
  RABBITMQ_40_MANAGEMENT_URL: z.url(),
  RABBITMQ_40_ADMIN_USERNAME: z.string().min(1),
  RABBITMQ_40_ADMIN_PASSWORD: z.string().min(1),
  RABBITMQ_40_CTL: z.string().min(1),
  RABBITMQ_40_VERSION: z.string().min(1),
  /** The optional second 4.3 node (`scripts/localenv.sh rabbitmq-43 up`), there only while it runs. */
  RABBITMQ_43_URL: z.string().startsWith("amqp://").optional(),
  RABBITMQ_43_MANAGEMENT_URL: z.url().optional(),
  RABBITMQ_43_ADMIN_USERNAME: z.string().min(1).optional(),
  RABBITMQ_43_ADMIN_PASSWORD: z.string().min(1).optional(),
  RABBITMQ_43_CTL: z.string().min(1).optional(),
  RABBITMQ_43_VERSION: z.string().min(1).optional(),
  /** Python with OpenStack's client libraries (scripts/localenv/oslo-requirements.txt). */
  OSLO_PYTHON: z.string().min(1),
  BAO_ADDR: z.url(),
  BAO_TOKEN: z.string().min(1),
  MARIADB_HOST: z.string().min(1),
  MARIADB_PORT: z.coerce.number().int().min(1).max(65535),
  MARIADB_ADMIN_USERNAME: z.string().min(1),
  MARIADB_ADMIN_PASSWORD: z.string().min(1),
  /** The mariadb client, logged in as the administrator. */
  MARIADB: z.string().min(1),
  /** The server's TLS: the CA that signs its certificate, and a client certificate and key it signed. */
  MARIADB_CA_FILE: z.string().min(1),
  MARIADB_CLIENT_CERT_FILE: z.string().min(1),
  MARIADB_CLIENT_KEY_FILE: z.string().min(1),
  LOCALENV_STATE: z.string().min(1),
  /** The etcd the clusters store in, for tests that start a private kube-apiserver. */
  LOCALENV_ETCD_URL: z.url(),
  /** The folder with kube-apiserver, kube-controller-manager and kubectl. */
  LOCALENV_K8S_BIN: z.string().min(1),
});

export type LocalEnv = z.infer<typeof schema>;

let cached: LocalEnv | undefined;

export function localEnv(): LocalEnv {
  if (cached) return cached;
  const state = process.env.LOCALENV_STATE ?? fileURLToPath(new URL("../../.localenv", import.meta.url));
  const text = readFileSync(`${state}/env.sh`, "utf8");
  const vars: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^export ([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m?.[1] && m[2] !== undefined) vars[m[1]] = m[2];
  }
  cached = schema.parse(vars);
  return cached;
}
