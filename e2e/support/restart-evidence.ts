// Why a pod's container was restarted, as a person would look it up: the last termination in the pod's
// status (exit code, reason, times), the pod's events (a failed probe, a kill) and the end of the
// previous container's log (`kubectl logs --previous`). The operator's log redacts secrets; this text
// carries nothing else of the pod's.
import type * as k8s from "@kubernetes/client-node";

const LOG_LINES = 60;

/** Every container of `pod` that restarted, with its evidence; "" when none did. */
export async function restartEvidence(core: k8s.CoreV1Api, pod: k8s.V1Pod): Promise<string> {
  const namespace = pod.metadata?.namespace ?? "";
  const name = pod.metadata?.name ?? "";
  const restarted = (pod.status?.containerStatuses ?? []).filter((s) => s.restartCount > 0);
  if (restarted.length === 0) return "";
  const events = await core
    .listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })
    .then(
      (list) =>
        list.items
          .filter((e) => e.type !== "Normal" || e.reason === "Killing")
          .map((e) => `  ${e.reason} x${e.count ?? 1}: ${e.message ?? ""}`),
      (error: unknown) => [`  (events not read: ${String(error)})`],
    );
  const parts = [`pod ${name} on ${pod.spec?.nodeName ?? "?"}:`, "events:", ...events];
  for (const status of restarted) {
    const last = status.lastState?.terminated;
    parts.push(
      `container ${status.name}: restartCount ${status.restartCount}, last termination: ` +
        (last
          ? `exit code ${last.exitCode}, reason ${last.reason ?? "?"}, signal ${last.signal ?? "-"}, ` +
            `started ${String(last.startedAt)}, finished ${String(last.finishedAt)}` +
            (last.message ? `, message ${last.message}` : "")
          : "none recorded"),
    );
    const log = await core
      .readNamespacedPodLog({ namespace, name, container: status.name, previous: true, tailLines: LOG_LINES })
      .catch((error: unknown) => `(not read: ${String(error)})`);
    parts.push(`previous log (last ${LOG_LINES} lines):`, log.trimEnd());
  }
  return parts.join("\n");
}
