// Plugins and a gatekeeper for the gatekeeper's unit tests: recording plugins, a logger that keeps its
// lines, and a pass target on the fake port.
import {
  GATEKEEPER_API_VERSION,
  type GatedKindName,
  type GatekeeperPlugin,
} from "../../src/gatekeeper/api.ts";
import { Gatekeeper, type PassTarget } from "../../src/gatekeeper/gatekeeper.ts";
import type { Grouped } from "../../src/gatekeeper/order.ts";
import type { LogSink } from "../../src/runtime/base/logging.ts";
import { FakeKube } from "../../harness/fakes/fake-kube.ts";

export class RecordingLog implements LogSink {
  readonly lines: { level: string; obj: object; msg: string | undefined }[] = [];
  debug(obj: object, msg?: string) {
    this.lines.push({ level: "debug", obj, msg });
  }
  info(obj: object, msg?: string) {
    this.lines.push({ level: "info", obj, msg });
  }
  warn(obj: object, msg?: string) {
    this.lines.push({ level: "warn", obj, msg });
  }
  error(obj: object, msg?: string) {
    this.lines.push({ level: "error", obj, msg });
  }
}

/** A validating plugin that records each hook it runs as `<name>:<hook>` (with the exit's outcome). */
export function recorder(
  name: string,
  calls: string[],
  kind: GatedKindName = "RabbitMQVhost",
): GatekeeperPlugin {
  return {
    apiVersion: GATEKEEPER_API_VERSION,
    name,
    validating: {
      [kind]: {
        entry: () => void calls.push(`${name}:entry`),
        exit: (context: { outcome: string }) => void calls.push(`${name}:exit:${context.outcome}`),
      },
    },
  };
}

export const noPlugins: Grouped<GatekeeperPlugin> = { mandatory: [], default: [], custom: [] };

export function gatekeeperOf(
  plugins: Partial<Grouped<GatekeeperPlugin>>,
  log: LogSink = new RecordingLog(),
  hookTimeoutMs?: number,
) {
  return new Gatekeeper({
    plugins: { ...noPlugins, ...plugins },
    log,
    clock: { now: () => 0, monotonic: () => 0 },
    ...(hookTimeoutMs === undefined ? {} : { hookTimeoutMs }),
  });
}

export function target(teardown = false, log: LogSink = new RecordingLog()): PassTarget {
  return { cluster: "", kube: new FakeKube(), log, teardown };
}

export const order = () => ({
  apiVersion: "c5c3.io/v1alpha1",
  kind: "RabbitMQVhost",
  metadata: { name: "o", namespace: "t", uid: "u-1", generation: 1 },
  spec: { controlPlaneRef: { name: "cp" }, rotation: { interval: "8760h", gracePeriod: "1h" } },
  status: { observedGeneration: 1 },
});
