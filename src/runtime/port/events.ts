import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { Clock } from "../base/clock.ts";
import { conditionTransitions, type Condition, type DesiredCondition } from "../base/conditions.ts";
import { apiVersionOf, KubeApiError, type Kind, type KubeObject, type KubeRest } from "./kube-rest.ts";
import { openFence, type WriteFence } from "../base/write-fence.ts";
import { microTime } from "../base/micro-time.ts";
import { redactString } from "../base/redact.ts";

export interface EventSpec {
  type: "Normal" | "Warning";
  reason: string;
  action: string;
  note: string;
}

/** A False condition is worth a Warning; anything else is Normal. */
export function eventFor(condition: DesiredCondition): EventSpec {
  return {
    type: condition.status === "False" ? "Warning" : "Normal",
    reason: condition.reason,
    action: condition.type,
    note: condition.message,
  };
}

/**
 * Emits events.k8s.io/v1 Events about objects; failures are logged, never thrown. An Event the write
 * fence refuses (this process does not lead) is dropped: the fence logs it.
 */
export class EventRecorder {
  private readonly controller: string;
  private readonly instance: string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly fence: WriteFence;

  constructor(options: {
    controller: string;
    instance: string;
    clock: Clock;
    log: Logger;
    fence?: WriteFence;
  }) {
    this.controller = options.controller;
    this.instance = options.instance;
    this.clock = options.clock;
    this.log = options.log;
    this.fence = options.fence ?? openFence;
  }

  /**
   * One event per condition whose status or reason changed from `before` to `after`; `type`, when
   * given, replaces eventFor's (the caller knows a False condition is a wait, say).
   */
  async recordTransitions(
    rest: KubeRest,
    kind: Kind,
    object: KubeObject,
    before: Condition[] | undefined,
    after: DesiredCondition[],
    type?: EventSpec["type"],
  ): Promise<number> {
    const transitions = conditionTransitions(before, after);
    for (const { condition } of transitions) {
      await this.emit(rest, kind, object, { ...eventFor(condition), ...(type ? { type } : {}) });
    }
    return transitions.length;
  }

  async emit(rest: KubeRest, kind: Kind, object: KubeObject, spec: EventSpec): Promise<void> {
    const { name = "", namespace = "default", uid, resourceVersion } = object.metadata ?? {};
    const event = {
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: `${name}.${randomBytes(8).toString("hex")}`, namespace },
      eventTime: microTime(this.clock.now()),
      reportingController: this.controller,
      reportingInstance: this.instance,
      action: spec.action,
      reason: spec.reason,
      type: spec.type,
      note: redactString(spec.note).slice(0, 1024),
      regarding: { apiVersion: apiVersionOf(kind), kind: kind.kind, name, namespace, uid, resourceVersion },
    };
    if (!this.fence.permits(`an Event ${spec.reason} on ${kind.kind} ${namespace}/${name}`)) return;
    try {
      await rest.request(
        "POST",
        `/apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`,
        { body: event, discard: true },
      );
    } catch (error) {
      // An object in a namespace being deleted: the namespace and its Events go, so this one is moot.
      if (error instanceof KubeApiError && error.code === 403 && /being terminated/.test(error.detail)) {
        this.log.debug({ reason: spec.reason, namespace }, "no event: its namespace is being deleted");
        return;
      }
      this.log.warn({ err: error, reason: spec.reason }, "could not record an event");
    }
  }
}
