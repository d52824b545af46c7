import { z } from "zod";
import { logLevels } from "../base/logging.ts";
import {
  SettingsError,
  booleanText,
  deadline,
  duration,
  integerText,
  parseSettings,
  setting,
  type SettingGroup,
  type SettingValues,
} from "./settings.ts";

const hostPort = z.string().regex(/^[^:]*:\d{1,5}$/, "must be host:port, e.g. :8080");

/** The runtime's own settings; components add theirs by merging their group into this one. */
export const runtimeSettings = {
  kubeconfig: setting({
    description: "kubeconfig of the management cluster; empty = KUBECONFIG or the in-cluster config",
    schema: z.string(),
    default: "",
  }),
  "log-level": setting({ description: "log level", schema: z.enum(logLevels), default: "info" }),
  "metrics-bind-address": setting({
    description: "host:port serving /metrics",
    schema: hostPort,
    default: ":8443",
  }),
  "metrics-secure": setting({
    description:
      "serve /metrics over HTTPS, to callers whose token may get /metrics (TokenReview, SubjectAccessReview); false = plain HTTP, no authentication",
    schema: booleanText,
    default: "true",
    boolean: true,
  }),
  "metrics-cert-dir": setting({
    description: "directory holding tls.crt and tls.key for /metrics; empty = a self-signed certificate",
    schema: z.string(),
    default: "",
  }),
  "health-probe-bind-address": setting({
    description: "host:port serving /healthz and /readyz (plain HTTP)",
    schema: hostPort,
    default: ":8081",
  }),
  // docs/performance.md: more workers than 1 overlap the waits on the API server, the broker and OpenBao.
  "max-concurrent-reconciles": setting({
    description: "workers per controller",
    schema: integerText(1),
    default: "8",
  }),
  "reconcile-timeout": setting({ description: "deadline of one reconcile", schema: deadline, default: "2m" }),
  "transient-requeue-interval": setting({
    description: "retry interval after a transient error (a backend down, a timeout)",
    schema: duration,
    default: "30s",
  }),
  "terminal-retry-interval": setting({
    description: "backstop retry after a terminal error, besides the change that fixes it (0s = none)",
    schema: duration,
    default: "2m",
  }),
  "drift-resync-min": setting({
    description: "shortest wait before a reconciled object is checked again for drift",
    schema: duration,
    default: "5m",
  }),
  "drift-resync-max": setting({
    description: "longest such wait; each object draws its own in between, so re-checks spread out",
    schema: duration,
    default: "10m",
  }),
  "resync-period": setting({
    description: "how often every cached object is handed to its controllers at once (0s = never)",
    schema: duration,
    default: "0s",
  }),
  "watch-restart-period": setting({
    description: "longest time a watch runs before it is restarted",
    schema: deadline,
    default: "5m",
  }),
  "leader-elect": setting({
    description: "run controllers only while holding the Lease",
    schema: booleanText,
    default: "true",
    boolean: true,
  }),
  "leader-election-id": setting({
    description: "name of the Lease",
    schema: z.string().regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, "must be a DNS subdomain name"),
    default: "vhost-broker",
  }),
  "leader-election-namespace": setting({
    description: "namespace of the Lease",
    schema: z.string().min(1, "must not be empty"),
    default: "vhost-broker-system",
  }),
  "leader-election-identity": setting({
    description: "identity in the Lease; empty = hostname and a random suffix",
    schema: z.string(),
    default: "",
  }),
  "lease-duration": setting({ description: "how long a Lease is valid", schema: deadline, default: "15s" }),
  "renew-deadline": setting({
    description: "how long the leader keeps trying to renew before giving up",
    schema: deadline,
    default: "10s",
  }),
  "retry-period": setting({
    description: "interval between Lease attempts",
    schema: deadline,
    default: "2s",
  }),
  "cluster-secret-namespace": setting({
    description: "namespace of the kubeconfig Secrets that register target clusters",
    schema: z.string().min(1, "must not be empty"),
    default: "c5c3-clusters",
  }),
  "secret-namespaces": setting({
    description:
      "comma-separated namespaces of the management cluster where the operator reads, watches and writes Secrets (the chart's rbac.secretNamespaces); empty = every namespace",
    schema: z.string().transform((text, ctx) => {
      const names = text
        .split(",")
        .map((n) => n.trim())
        .filter((n) => n !== "");
      const bad = names.find((n) => !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(n));
      if (bad !== undefined) {
        ctx.addIssue({ code: "custom", message: `"${bad}" is not a namespace name` });
        return z.NEVER;
      }
      return [...new Set(names)];
    }),
    default: "",
  }),
  "allow-insecure-target-clusters": setting({
    description:
      "engage target clusters whose kubeconfig sets insecure-skip-tls-verify (with a warning); by default their Secrets are refused, since anyone on the path could act as that cluster",
    schema: booleanText,
    default: "false",
    boolean: true,
  }),
} satisfies SettingGroup;

export type RuntimeConfig = SettingValues<typeof runtimeSettings>;

/** Parses the settings of `group` (which includes the runtime's) and checks how they relate. */
export function loadConfig<G extends typeof runtimeSettings>(
  group: G,
  argv: string[],
  env: Record<string, string | undefined>,
): SettingValues<G> {
  const config = parseSettings(group, argv, env);
  const runtime = config as RuntimeConfig;
  if (runtime["lease-duration"] <= runtime["renew-deadline"]) {
    throw new SettingsError("invalid setting lease-duration: must be longer than renew-deadline");
  }
  // client-go requires renew-deadline > 1.2 x retry-period (the jitter).
  if (runtime["renew-deadline"] <= 1.2 * runtime["retry-period"]) {
    throw new SettingsError("invalid setting renew-deadline: must be longer than 1.2 x retry-period");
  }
  if (runtime["drift-resync-min"] > runtime["drift-resync-max"]) {
    throw new SettingsError("invalid setting drift-resync-min: must not exceed drift-resync-max");
  }
  return config;
}
