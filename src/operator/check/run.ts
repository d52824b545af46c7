// `vhost-broker check`: the post-install check the chart's `helm test` runs with the operator's image.
// With the pod's ServiceAccount it reads discovery, lists each kind the operator needs in the release
// namespace, and reads the operator's Lease, until verdict.ts finds nothing wrong or --check-timeout
// passes; then it exits 0, or 1 with one line per failure on stderr (2 for a bad setting).
import { userAgent, versionLine } from "../../runtime/base/build.ts";
import { realClock, sleep, type Clock } from "../../runtime/base/clock.ts";
import type { LeaseSpec } from "../../runtime/leadership/lease.ts";
import { loadManagementConfig } from "../../runtime/process/bootstrap.ts";
import { runtimeSettings } from "../../runtime/process/config.ts";
import {
  SettingsError,
  deadline,
  helpText,
  parseSettings,
  setting,
  type SettingGroup,
  type SettingValues,
} from "../../runtime/process/settings.ts";
import { KubeconfigError } from "../../runtime/port/kubeconfig.ts";
import { KubeApiError, KubeRest, isApiStatus } from "../../runtime/port/kube-rest.ts";
import { operatorSettings } from "../settings.ts";
import {
  checkedKinds,
  failures,
  nextStep,
  passed,
  resourceName,
  watchLease,
  type LeaseWatch,
  type Read,
  type Reads,
  type Subject,
} from "./verdict.ts";

const NAME = "vhost-broker check";

/** The operator's settings the check reads (the chart sets them as for the operator), and its own. */
export const checkSettings = {
  kubeconfig: runtimeSettings.kubeconfig,
  "leader-election-id": runtimeSettings["leader-election-id"],
  "leader-election-namespace": runtimeSettings["leader-election-namespace"],
  "topology-controller": operatorSettings["topology-controller"],
  "sql-controller": operatorSettings["sql-controller"],
  "mariadb-orders": operatorSettings["mariadb-orders"],
  "check-timeout": setting({
    description:
      "how long the check tries again before it fails: helm test may run while the operator's pods still start",
    schema: deadline,
    default: "2m",
  }),
} satisfies SettingGroup;

/** Attempts this far apart: client-go's retry period, within which a leader renews its Lease. */
const RETRY_MS = 2_000;
/** Deadline of one request. */
const REQUEST_MS = 10_000;

/** Runs the check; resolves with the exit code. */
export async function runCheck(
  argv: string[],
  env: Record<string, string | undefined>,
  clock: Clock = realClock,
): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(`${helpText(NAME, checkSettings)}\n`);
    return 0;
  }
  if (argv.includes("--version")) {
    process.stdout.write(`${versionLine()}\n`);
    return 0;
  }
  let config: SettingValues<typeof checkSettings>;
  let rest: KubeRest;
  try {
    config = parseSettings(checkSettings, argv, env);
    rest = new KubeRest(loadManagementConfig(config.kubeconfig), undefined, userAgent("check"));
  } catch (error) {
    if (!(error instanceof SettingsError) && !(error instanceof KubeconfigError)) throw error;
    process.stderr.write(`${NAME}: ${error.message}\n`);
    return 2;
  }
  const subject: Subject = {
    kinds: checkedKinds(config),
    namespace: config["leader-election-namespace"],
    lease: config["leader-election-id"],
  };
  const started = clock.monotonic();
  let watch: LeaseWatch | undefined;
  let shown = "";
  try {
    for (;;) {
      const reads = await read(rest, subject);
      if ("value" in reads.lease) watch = watchLease(watch, reads.lease.value, clock.monotonic());
      const failed = failures(subject, reads, watch, clock);
      const step = nextStep(failed, clock.monotonic() - started, config["check-timeout"], RETRY_MS);
      if (step.kind === "pass") {
        const spec = "value" in reads.lease ? reads.lease.value : undefined;
        process.stdout.write(`${NAME}: passed: ${passed(subject, spec, clock.now())}\n`);
        return 0;
      }
      if (step.kind === "fail") {
        for (const line of failed) process.stderr.write(`${NAME}: failed: ${line}\n`);
        return 1;
      }
      // While it waits, each new set of failures once, so that the pod's log shows the progress.
      const current = failed.join("\n");
      if (current !== shown) for (const line of failed) process.stdout.write(`${NAME}: waiting: ${line}\n`);
      shown = current;
      await sleep(clock, step.inMs);
    }
  } finally {
    await rest.close();
  }
}

/** One attempt's reads: /version first, so that an unreachable server gives one line, not one per read. */
async function read(rest: KubeRest, subject: Subject): Promise<Reads> {
  const get = <T>(path: string, query?: Record<string, string | number>) =>
    rest.request<T>("GET", path, { signal: AbortSignal.timeout(REQUEST_MS), ...(query ? { query } : {}) });
  const reads: Reads = {
    server: rest.server(),
    discovery: new Map(),
    lists: new Map(),
    lease: { value: undefined },
  };
  const reached = await outcome(get("/version"));
  if ("error" in reached) return { ...reads, unreachable: reached.error };
  const versions = [...new Set(subject.kinds.map((k) => k.apiVersion))];
  await Promise.all([
    ...versions.map(async (version) => {
      const found = await outcome(get<{ resources?: { name?: string }[] }>(`/apis/${version}`), (error) =>
        isApiStatus(error, 404),
      );
      reads.discovery.set(
        version,
        "value" in found ? { value: found.value?.resources?.map((r) => r.name ?? "") } : found,
      );
    }),
    ...subject.kinds.map(async (kind) => {
      const path = `/apis/${kind.apiVersion}/namespaces/${subject.namespace}/${kind.plural}`;
      const listed = await outcome(get(path, { limit: 1 }));
      reads.lists.set(resourceName(kind), "value" in listed ? { value: true } : listed);
    }),
    (async () => {
      const path = `/apis/coordination.k8s.io/v1/namespaces/${subject.namespace}/leases/${subject.lease}`;
      const lease = await outcome(get<{ spec?: LeaseSpec }>(path), (error) => isApiStatus(error, 404));
      // A Lease without a spec exists, with no holder.
      reads.lease = "value" in lease ? { value: lease.value && (lease.value.spec ?? {}) } : lease;
    })(),
  ]);
  return reads;
}

/**
 * A request's outcome: its answer, undefined for an error `absent` says means "not there", or the
 * error's message (the API server's status and reason, or why it did not answer).
 */
async function outcome<T>(
  request: Promise<T>,
  absent: (error: unknown) => boolean = () => false,
): Promise<Read<T | undefined>> {
  try {
    return { value: await request };
  } catch (error) {
    if (absent(error)) return { value: undefined };
    if (error instanceof KubeApiError)
      return { error: `${error.code} ${error.reason}${error.detail ? `: ${error.detail}` : ""}` };
    return { error: error instanceof Error ? error.message : String(error) };
  }
}
