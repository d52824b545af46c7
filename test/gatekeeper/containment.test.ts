// A plugin's stray throw (from a timer) or rejection (a promise it left) fails its hook and is logged
// naming it; the process goes on. A stray failure outside every plugin still ends the process. Run in a
// child process with the handlers main.ts installs: in this one they would fight the test runner's.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("contains a plugin's stray failures, and only a plugin's", () => {
  const script = fileURLToPath(new URL("./fixtures/stray-failures.ts", import.meta.url));
  const child = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 30_000 });
  const lines = child.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.filter((l) => "pass" in l)).toEqual([
    {
      pass: "timer-thrower",
      rejection:
        'gatekeeper plugin "timer-thrower" rejected this RabbitMQVhost: a timer or promise it started failed: boom from a timer',
    },
    // Its hook had returned: the pass went through, and the rejection is logged naming the plugin.
    { pass: "left-rejected", rejection: null },
  ]);
  const logged = lines.filter((l) => "msg" in l);
  expect(logged).toContainEqual(
    expect.objectContaining({
      level: "error",
      plugin: "left-rejected",
      error: "nobody awaits this",
      msg: 'gatekeeper plugin "left-rejected": a promise rejected with no handler; its hook fails, the process goes on',
    }),
  );
  expect(logged).toContainEqual(
    expect.objectContaining({
      level: "fatal",
      msg: "an exception nothing caught outside every gatekeeper plugin: the process stops",
    }),
  );
  expect(lines).not.toContainEqual({ survived: true });
  expect(child.status).toBe(1);
});
