import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { expect, it } from "vitest";
import { freePort } from "./ports.ts";

it("picks a loopback port below the kernel's ephemeral range that a server can listen on", async () => {
  const [low] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/);
  const port = await freePort();
  expect(port).toBeLessThan(Number(low));
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  await new Promise((resolve) => server.close(resolve));
});

it("never hands out the same port twice in one process, even when nothing bound the first", async () => {
  // 3,000 ports: picked at random, 300 picks would repeat one almost surely (birthday bound).
  const ports = [];
  for (let i = 0; i < 300; i++) ports.push(await freePort());
  expect(new Set(ports).size).toBe(ports.length);
});
