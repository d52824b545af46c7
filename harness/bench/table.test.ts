// The benchmark's table: rows of runs that measured different phases line up by phase and figure, and
// several brokers name each column with its RabbitMQ version.
import { describe, expect, it } from "vitest";
import { alignRows, growthText, runLabel } from "./table.ts";
import type { BenchReport } from "./run.ts";

const row = (phase: string, figure: string, value: string) => ({
  phase,
  figure,
  value,
  floor: "",
  ratio: "",
  target: "",
});

describe("alignRows", () => {
  it("puts each figure once, a row only some runs have after the row before it", () => {
    const full = [row("a", "1", "x"), row("memory", "m", "y"), row("b", "2", "z")];
    const short = [row("a", "1", "x2"), row("b", "2", "z2"), row("c", "3", "w2")];
    const aligned = alignRows([full, short]);
    expect(aligned.map((r) => `${r.base.phase}:${r.base.figure}`)).toEqual(["a:1", "memory:m", "b:2", "c:3"]);
    expect(aligned.map((r) => r.cells.map((c) => c?.value))).toEqual([
      ["x", "x2"],
      ["y", undefined],
      ["z", "z2"],
      [undefined, "w2"],
    ]);
  });
});

describe("runLabel", () => {
  const report = (brokers: { part: "rabbitmq" | "rabbitmq-2"; version: string }[], backends: string[]) =>
    ({
      config: { backends },
      brokers: brokers.map((b) => ({ ...b, topologyFloor: {} })),
    }) as unknown as BenchReport;

  it("names the backend alone with one broker, the broker and its version with several", () => {
    const one = report([{ part: "rabbitmq", version: "4.3.6" }], ["builtin", "upstream"]);
    expect(runLabel(one, { backend: "upstream", broker: { part: "rabbitmq", version: "4.3.6" } })).toBe(
      "upstream",
    );
    const two = report(
      [
        { part: "rabbitmq", version: "4.3.6" },
        { part: "rabbitmq-2", version: "3.10.8" },
      ],
      ["builtin"],
    );
    expect(runLabel(two, { backend: "builtin", broker: { part: "rabbitmq-2", version: "3.10.8" } })).toBe(
      "RabbitMQ 3.10.8 (rabbitmq-2)",
    );
    const both = { ...two, config: { ...two.config, backends: ["builtin", "upstream"] } } as BenchReport;
    expect(runLabel(both, { backend: "upstream", broker: { part: "rabbitmq", version: "4.3.6" } })).toBe(
      "upstream, RabbitMQ 4.3.6 (rabbitmq)",
    );
  });
});

describe("growthText", () => {
  it("says the batch's time holding few vhosts and holding many, and each vhost's", () => {
    expect(
      growthText({ items: 40, concurrency: 1, emptyHeld: 3, emptyMs: 1_200, held: 1_003, heldMs: 12_000 }),
    ).toBe("1.2 s holding 3 vhosts -> 12.0 s holding 1003; 30 ms -> 300 ms each");
  });
});
