import { describe, expect, it } from "vitest";
import { bindingEndKey, bindingsByEnd } from "./binding-ends.ts";
import { bindingsOf, readyChanged } from "./binding.ts";

describe("bindingsOf", () => {
  const object = (kind: string, namespace: string, name: string, spec: Record<string, unknown>) => ({
    kind,
    metadata: { namespace, name },
    spec,
  });
  const bindings = [
    object("Binding", "app", "to-q", { vhost: "v", source: "x", destination: "q", destinationType: "queue" }),
    object("Binding", "app", "to-x", {
      vhost: "v",
      source: "x",
      destination: "y",
      destinationType: "exchange",
    }),
    object("Binding", "app", "default-vhost", { source: "x", destination: "q", destinationType: "queue" }),
    object("Binding", "other", "elsewhere", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "queue",
    }),
    object("Binding", "app", "exchange-named-q", {
      vhost: "v",
      source: "x",
      destination: "q",
      destinationType: "exchange",
    }),
  ];
  const names = (end: ReturnType<typeof object>) => bindingsOf(bindings, end).map((b) => b.metadata?.name);

  it("wakes the bindings whose destination is a queue, by its broker name and vhost in its namespace", () => {
    expect(names(object("Queue", "app", "queue-cr", { name: "q", vhost: "v" }))).toEqual(["to-q"]);
    expect(names(object("Queue", "app", "queue-cr", { name: "q" }))).toEqual(["default-vhost"]);
  });

  it("wakes the bindings whose source or destination is an exchange", () => {
    expect(names(object("Exchange", "app", "x-cr", { name: "x", vhost: "v" }))).toEqual([
      "to-q",
      "to-x",
      "exchange-named-q",
    ]);
    expect(names(object("Exchange", "app", "y-cr", { name: "y", vhost: "v" }))).toEqual(["to-x"]);
  });

  it("wakes nothing for an end without a broker name", () => {
    expect(names(object("Queue", "app", "queue-cr", { vhost: "v" }))).toEqual([]);
  });

  it("finds through the bindingsByEnd index every binding a scan finds", () => {
    const all = [
      ...bindings,
      object("Binding", "app", "x-to-itself", { vhost: "v", source: "x", destination: "x" }),
      object("Binding", "app", "no-type", { vhost: "v", source: "y", destination: "q" }),
    ];
    const ends = [
      object("Queue", "app", "q-cr", { name: "q", vhost: "v" }),
      object("Queue", "app", "q-default", { name: "q" }),
      object("Queue", "other", "q-other", { name: "q", vhost: "v" }),
      object("Queue", "app", "x-as-queue", { name: "x", vhost: "v" }),
      object("Exchange", "app", "x-cr", { name: "x", vhost: "v" }),
      object("Exchange", "app", "y-cr", { name: "y", vhost: "v" }),
      object("Exchange", "app", "q-as-exchange", { name: "q", vhost: "v" }),
      object("Exchange", "app", "x-default", { name: "x" }),
    ];
    let found = 0;
    for (const end of ends) {
      const key = bindingEndKey(end, end.kind === "Queue" ? "queue" : "exchange");
      const filed = all.filter(
        (b) => b.metadata.namespace === end.metadata.namespace && bindingsByEnd.values(b).includes(key ?? ""),
      );
      expect(bindingsOf(filed, end), end.metadata.name).toEqual(bindingsOf(all, end));
      found += bindingsOf(all, end).length;
    }
    expect(found).toBe(12);
  });
});

describe("readyChanged", () => {
  const at = (ready?: "True" | "False") => ({
    metadata: { generation: 1 },
    status: { conditions: ready ? [{ type: "Ready", status: ready }] : [] },
  });

  it("holds for the first Ready condition written, and a change of its status", () => {
    expect(readyChanged(at(), at("True"))).toBe(true);
    expect(readyChanged(at(), at("False"))).toBe(true);
    expect(readyChanged(at("False"), at("True"))).toBe(true);
    expect(readyChanged(at("True"), at("False"))).toBe(true);
  });

  it("does not hold for an update that leaves it as it was", () => {
    expect(readyChanged(at("True"), at("True"))).toBe(false);
    expect(readyChanged(at(), at())).toBe(false);
  });
});
