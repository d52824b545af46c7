import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import {
  checkDependencies,
  describeViolation,
  importsOf,
  productionSources,
  repositoryRoot,
  roomSources,
} from "../harness/rules/dependency-rules.ts";

describe("dependency rules", () => {
  it("hold for every non-test file under src/", () => {
    const files = productionSources(repositoryRoot);
    // A scan that found nothing would pass vacuously.
    expect(files.length).toBeGreaterThan(50);
    expect(files.some((f) => f.path === "src/runtime/port/kube.ts")).toBe(true);
    expect(files.some((f) => f.path.endsWith(".test.ts"))).toBe(false);
    expect(checkDependencies(files).map(describeViolation)).toEqual([]);
  });

  // What goes in which room is README.md's "Where a test goes"; these two tests hold the rooms to it.
  it("hold for every file of harness/, test/, e2e/ and scripts/", () => {
    const files = roomSources(repositoryRoot);
    // A scan that found nothing would pass vacuously.
    for (const file of [
      "harness/world/world.ts",
      "test/architecture.test.ts",
      "e2e/orders.itest.ts",
      "scripts/bench.ts",
    ]) {
      expect(files.some((f) => f.path === file)).toBe(true);
    }
    expect(checkDependencies(files).map(describeViolation)).toEqual([]);
  });

  it("keep test/, e2e/ and scripts/ on harness/ and src/, harness/ on src/ alone", () => {
    const file = (path: string, ...lines: string[]) => ({ path, text: lines.join("\n") });
    const violations = checkDependencies([
      file(
        "test/orders/a.itest.ts",
        'import "../../harness/world/world.ts";',
        'import "../../src/orders/core/kind.ts";',
        'import "../../e2e/support/node.ts";',
        'import "../../scripts/bench.ts";',
        'import "../../scripts/gen-api.ts";',
      ),
      file("e2e/b.itest.ts", 'import "./support/node.ts";', 'import "../test/orders/pass-world.ts";'),
      file("e2e/support/c.ts", 'import "../../scripts/gen-api.ts";'),
      file(
        "scripts/d.ts",
        'import "../harness/bench/run.ts";',
        'const e = await import("../e2e/support/node.ts");',
      ),
      file(
        "harness/world/e.ts",
        'import "../fakes/fake-kube.ts";',
        'import "../../src/api/index.ts";',
        'export * from "../../test/orders/pass-world.ts";',
      ),
      file("src/orders/core/f.ts", 'import "../../../harness/fakes/fake-clock.ts";'),
      file("src/orders/core/g.test.ts", 'import "../../../harness/fakes/fake-clock.ts";'),
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'test/orders/a.itest.ts:3 imports "../../e2e/support/node.ts" (test must not import e2e)',
      'test/orders/a.itest.ts:4 imports "../../scripts/bench.ts" (test must not import scripts)',
      'e2e/b.itest.ts:2 imports "../test/orders/pass-world.ts" (e2e must not import test)',
      'e2e/support/c.ts:1 imports "../../scripts/gen-api.ts" (e2e must not import scripts)',
      'scripts/d.ts:2 imports "../e2e/support/node.ts" (scripts must not import e2e)',
      'harness/world/e.ts:3 imports "../../test/orders/pass-world.ts" (harness must not import test)',
      'src/orders/core/f.ts:1 imports "../../../harness/fakes/fake-clock.ts" (src must not import harness)',
    ]);
  });

  it("catch a forbidden import, naming the file, the line and the import", () => {
    const file = (path: string, ...lines: string[]) => ({ path, text: lines.join("\n") });
    const violations = checkDependencies([
      file(
        "src/runtime/base/a.ts",
        'import { z } from "zod";',
        'import type { X } from "../../orders/x.ts";',
      ),
      file(
        "src/clusters/b.ts",
        'import { c } from "../runtime/clock.ts";',
        'export * from "../api/index.ts";',
      ),
      file(
        "src/orders/core/c.ts",
        'import { b } from "../../backup/store.ts";',
        'import "../../topology/y.ts";',
      ),
      file("src/topology/d.ts", 'const o = await import("../orders/o.ts");'),
      file("src/sql/e.ts", "import {", "  o,", '} from "../orders/o.ts";'),
      file("src/api/f.ts", 'import { z } from "zod";', 'import { k } from "../runtime/kube-rest.ts";'),
      file(
        "src/gatekeeper/g.ts",
        'import "../api/index.ts";',
        'import "../runtime/clock.ts";',
        'import "../backup/s.ts";',
      ),
      file("src/backup/h.ts", '// import "../orders/comment.ts"', 'import { t } from "../topology/t.ts";'),
      file("src/operator/i.ts", 'import "../orders/o.ts";', 'import "../topology/t.ts";'),
      file("src/main.ts", 'import "./orders/o.ts";'),
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'src/runtime/base/a.ts:2 imports "../../orders/x.ts" (runtime must not import orders)',
      'src/clusters/b.ts:2 imports "../api/index.ts" (clusters must not import api)',
      'src/orders/core/c.ts:2 imports "../../topology/y.ts" (orders must not import topology)',
      'src/topology/d.ts:1 imports "../orders/o.ts" (topology must not import orders)',
      'src/sql/e.ts:3 imports "../orders/o.ts" (sql must not import orders)',
      'src/api/f.ts:2 imports "../runtime/kube-rest.ts" (api must not import runtime)',
      'src/gatekeeper/g.ts:3 imports "../backup/s.ts" (gatekeeper must not import backup)',
      'src/backup/h.ts:2 imports "../topology/t.ts" (backup must not import topology)',
    ]);
  });

  it("let both built-in backends use the one engine, and the engine neither of them", () => {
    const file = (path: string, ...lines: string[]) => ({ path, text: lines.join("\n") });
    const violations = checkDependencies([
      file("src/topology/kinds/a.ts", 'import "../../external/engine.ts";', 'import "../../sql/b.ts";'),
      file("src/sql/kinds/c.ts", 'import "../../external/engine.ts";', 'import "../../topology/d.ts";'),
      file(
        "src/external/e.ts",
        'import "../gatekeeper/gatekeeper.ts";',
        'import "../topology/f.ts";',
        'import "../sql/g.ts";',
        'import "../orders/h.ts";',
        'import "../rabbitmq/i.ts";',
      ),
      file("src/orders/core/j.ts", 'import "../../external/engine.ts";'),
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'src/topology/kinds/a.ts:2 imports "../../sql/b.ts" (topology must not import sql)',
      'src/sql/kinds/c.ts:2 imports "../../topology/d.ts" (sql must not import topology)',
      'src/external/e.ts:2 imports "../topology/f.ts" (external must not import topology)',
      'src/external/e.ts:3 imports "../sql/g.ts" (external must not import sql)',
      'src/external/e.ts:4 imports "../orders/h.ts" (external must not import orders)',
      'src/external/e.ts:5 imports "../rabbitmq/i.ts" (external must not import rabbitmq)',
      'src/orders/core/j.ts:1 imports "../../external/engine.ts" (orders must not import external)',
    ]);
  });

  it("keep the order core free of every order kind's leg", () => {
    const violations = checkDependencies([
      {
        path: "src/orders/core/reconcile.ts",
        text: [
          'import "./kind.ts";',
          'import "../rabbitmq/kind.ts";',
          'import "../../runtime/kube.ts";',
        ].join("\n"),
      },
      { path: "src/orders/rabbitmq/kind.ts", text: 'import "../core/kind.ts";' },
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'src/orders/core/reconcile.ts:2 imports "../rabbitmq/kind.ts" (the order core must not import a leg)',
    ]);
  });

  it("keep each order leg on the core alone", () => {
    const violations = checkDependencies([
      {
        path: "src/orders/mariadb/kind.ts",
        text: ['import "../core/kind.ts";', 'import "./naming.ts";', 'import "../rabbitmq/naming.ts";'].join(
          "\n",
        ),
      },
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'src/orders/mariadb/kind.ts:3 imports "../rabbitmq/naming.ts" (an order leg must not import another leg)',
    ]);
  });

  it("keep the runtime's layers: each imports only those beneath it, every file in a layer", () => {
    const file = (path: string, ...lines: string[]) => ({ path, text: lines.join("\n") });
    const violations = checkDependencies([
      file("src/runtime/base/clock.ts", 'import "./errors.ts";', 'import "../port/kube.ts";'),
      file(
        "src/runtime/port/kube.ts",
        'import "../base/write-fence.ts";',
        'import "../leadership/lease-fence.ts";',
      ),
      file(
        "src/runtime/leadership/lease.ts",
        'import "../port/kube-rest.ts";',
        'import "../loop/work-queue.ts";',
      ),
      file(
        "src/runtime/loop/controller.ts",
        'import "../base/logging.ts";',
        'import "../process/manager.ts";',
      ),
      file(
        "src/runtime/process/manager.ts",
        'import "../loop/controller.ts";',
        'import "../leadership/lease.ts";',
      ),
      file("src/runtime/stray.ts", 'import "./base/clock.ts";'),
    ]);
    expect(violations.map(describeViolation)).toEqual([
      'src/runtime/base/clock.ts:2 imports "../port/kube.ts" (the runtime\'s base must not import its port)',
      'src/runtime/port/kube.ts:2 imports "../leadership/lease-fence.ts" (the runtime\'s port must not import its leadership)',
      'src/runtime/leadership/lease.ts:2 imports "../loop/work-queue.ts" (the runtime\'s leadership must not import its loop)',
      'src/runtime/loop/controller.ts:2 imports "../process/manager.ts" (the runtime\'s loop must not import its process)',
      'src/runtime/stray.ts:1 imports "" (a runtime file lives in one of its layers)',
    ]);
  });

  it("read every kind of import and nothing in comments or strings", () => {
    const text = [
      'import a from "./a.ts";',
      'import type { B } from "./b.ts";',
      'export { c } from "./c.ts";',
      'const d = await import("./d.ts");',
      '// import e from "./e.ts";',
      'const f = "import f from \\"./f.ts\\"";',
    ].join("\n");
    expect(importsOf(text).map((i) => i.specifier)).toEqual(["./a.ts", "./b.ts", "./c.ts", "./d.ts"]);
  });
});

describe("the operator's start-up", () => {
  it("loads no @kubernetes/client-node (exec and auth-provider users), mysql2 (MariaDB) or amqplib (the AMQP check)", () => {
    // Every module main.ts imports is loaded before --help is answered; the hook names what resolves.
    const hook = `import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) {
  const result = next(specifier, context);
  if (result.url.includes("/node_modules/")) process.stderr.write("loaded " + result.url + "\\n");
  return result;
} });`;
    const run = spawnSync(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(hook)}`, "src/main.ts", "--help"],
      { cwd: repositoryRoot, encoding: "utf8" },
    );
    expect(run.status).toBe(0);
    const packages = run.stderr.split("\n").filter((l) => l.startsWith("loaded "));
    // A hook that saw nothing would pass vacuously.
    expect(packages.some((l) => l.includes("/node_modules/zod/"))).toBe(true);
    expect(packages.filter((l) => l.includes("/node_modules/@kubernetes/"))).toEqual([]);
    expect(packages.filter((l) => /\/node_modules\/(mysql2|amqplib)\//.test(l))).toEqual([]);
  });
});
