// The Dockerfile's COPY sources must reach the build context: .dockerignore excludes everything else.
// Docker's rules: patterns in order, the last that matches a path (or one of its parents) decides,
// `!` includes again, `*` stays within a path segment and `**` spans segments.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), "utf8");

interface Rule {
  include: boolean;
  pattern: RegExp;
}

function rulesOf(dockerignore: string): Rule[] {
  return dockerignore
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => {
      const include = line.startsWith("!");
      const glob = (include ? line.slice(1) : line).replace(/^\/+|\/+$/g, "");
      const source = glob
        .split(/(\*\*\/?|\*|\?)/)
        .map((part) =>
          part === "**/" || part === "**"
            ? "(?:.*/)?"
            : part === "*"
              ? "[^/]*"
              : part === "?"
                ? "[^/]"
                : part.replace(/[.+^${}()|[\]\\]/g, "\\$&"),
        )
        .join("");
      return { include, pattern: new RegExp(`^${source}$`) };
    });
}

/** Whether the build context holds `path`: a rule that matches the path or a parent of it decides. */
function inContext(rules: Rule[], path: string): boolean {
  const segments = path.split("/");
  const prefixes = segments.map((_, i) => segments.slice(0, i + 1).join("/"));
  let included = true;
  for (const rule of rules) {
    if (prefixes.some((p) => rule.pattern.test(p))) included = rule.include;
  }
  return included;
}

/** The local sources of the Dockerfile's COPY instructions (not those copied from another stage). */
function copySources(dockerfile: string): string[] {
  return dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .filter((line) => /^COPY\s/i.test(line.trim()) && !/--from=/.test(line))
    .flatMap((line) => {
      const words = line
        .trim()
        .split(/\s+/)
        .slice(1)
        .filter((w) => !w.startsWith("--"));
      return words.slice(0, -1).map((w) => w.replace(/^\.\//, "").replace(/\/$/, ""));
    });
}

describe(".dockerignore", () => {
  const rules = rulesOf(read(".dockerignore"));
  const sources = copySources(read("Dockerfile"));

  it("reads the Dockerfile's COPY sources", () => {
    expect(sources).toEqual(
      expect.arrayContaining([
        "package.json",
        "package-lock.json",
        "tsconfig.json",
        "tsconfig.build.json",
        "src",
      ]),
    );
  });

  it("keeps every file the Dockerfile copies in the build context", () => {
    expect(sources.filter((s) => !inContext(rules, s))).toEqual([]);
    expect(inContext(rules, "src/main.ts")).toBe(true);
  });

  it("leaves out the rest, the tests under src/ too", () => {
    for (const path of [
      "node_modules/zod/package.json",
      ".localenv/env.sh",
      "test/dockerignore.test.ts",
      "src/runtime/process/config.test.ts",
    ])
      expect(inContext(rules, path), path).toBe(false);
  });

  it("matches as Docker does: the last rule wins, ** spans folders", () => {
    const r = rulesOf("*\n!src/\nsrc/**/*.test.ts\n!src/keep.test.ts");
    expect([inContext(r, "README.md"), inContext(r, "src/a/b.ts"), inContext(r, "src/a/b.test.ts")]).toEqual([
      false,
      true,
      false,
    ]);
    expect(inContext(r, "src/x.test.ts")).toBe(false);
    expect(inContext(r, "src/keep.test.ts")).toBe(true);
  });
});
