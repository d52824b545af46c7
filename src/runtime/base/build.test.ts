import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { build, userAgent } from "./build.ts";

describe("the build", () => {
  it("is package.json's name and version", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      name: string;
      version: string;
    };
    expect(build).toEqual({ name: pkg.name, version: pkg.version, revision: "unknown" });
  });

  it("names itself to the API servers in client-go's shape, with Go's names for the platform", () => {
    expect(userAgent("leader-election", "linux", "x64")).toBe(
      `vhost-broker/${build.version} (linux/amd64) leader-election`,
    );
    expect(userAgent("controller", "linux", "arm64")).toBe(
      `vhost-broker/${build.version} (linux/arm64) controller`,
    );
    expect(userAgent("controller", "win32", "ia32")).toBe(
      `vhost-broker/${build.version} (windows/386) controller`,
    );
  });
});
