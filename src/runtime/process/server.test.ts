import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { Counter, Gauge, Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { startMetricsServer } from "./server.ts";

describe("the metrics server", () => {
  const servers: { close(): void }[] = [];
  afterEach(() => servers.splice(0).forEach((s) => s.close()));

  /** A scrape of a registry with a_total 2, b 3 and c 4 (c's collection noted). */
  async function scrape(query: string): Promise<{ series: string[]; collectedC: boolean }> {
    const registry = new Registry();
    let collectedC = false;
    new Counter({ name: "a_total", help: "a", registers: [registry] }).inc(2);
    new Gauge({ name: "b", help: "b", registers: [registry] }).set(3);
    new Gauge({
      name: "c",
      help: "c",
      registers: [registry],
      collect() {
        collectedC = true;
        this.set(4);
      },
    });
    const log = pino({ level: "silent" });
    const server = await startMetricsServer({ address: "127.0.0.1:0", registry, log });
    servers.push(server);
    const { port } = server.address() as AddressInfo;
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics${query}`)).text();
    return { series: text.match(/^[a-z_]+ \d+$/gm) ?? [], collectedC };
  }

  it("answers only the metrics named, in the order asked, and collects no other", async () => {
    expect(await scrape("?name=b&name=a_total&name=absent")).toEqual({
      series: ["b 3", "a_total 2"],
      collectedC: false,
    });
  });

  it("answers every metric when none is named", async () => {
    expect(await scrape("")).toEqual({ series: ["a_total 2", "b 3", "c 4"], collectedC: true });
  });
});
