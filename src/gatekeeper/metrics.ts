// Every plugin invocation counted, by outcome, and timed.
import { Counter, Histogram, type Registry } from "prom-client";

/** ok: approved (or returned a valid output); threw: rejected or failed; refused: an invalid output. */
export type InvocationResult = "ok" | "threw" | "refused";

export interface Invocation {
  plugin: string;
  group: string;
  kind: string;
  hook: "entry" | "exit";
  result: InvocationResult;
  seconds: number;
}

export class GatekeeperMetrics {
  private readonly invocations: Counter<"plugin" | "group" | "kind" | "hook" | "result">;
  private readonly duration: Histogram<"plugin" | "kind" | "hook">;

  constructor(registry: Registry) {
    this.invocations = new Counter({
      name: "vhost_broker_gatekeeper_plugin_invocations_total",
      help: "Gatekeeper plugin hooks invoked, by plugin, group, kind, hook and result (ok, threw, refused)",
      labelNames: ["plugin", "group", "kind", "hook", "result"],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: "vhost_broker_gatekeeper_plugin_duration_seconds",
      help: "How long a gatekeeper plugin hook took, by plugin, kind and hook",
      labelNames: ["plugin", "kind", "hook"],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30],
      registers: [registry],
    });
  }

  record(i: Invocation): void {
    this.invocations.inc({ plugin: i.plugin, group: i.group, kind: i.kind, hook: i.hook, result: i.result });
    this.duration.observe({ plugin: i.plugin, kind: i.kind, hook: i.hook }, i.seconds);
  }
}
