import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { build, readBuild, userAgent } from "./build.ts";

describe("the build", () => {
  const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
    name: string;
    version: string;
  };

  it("is package.json's name and version, with the revision of the process's environment", () => {
    expect(build).toEqual(readBuild(process.env));
    expect(build).toMatchObject({ name: pkg.name, version: pkg.version });
  });

  it("reads the revision scripts/image.sh sets, and is unknown without one", () => {
    const commit = "137375e328ae83d1f5ced9dcf3c15e4302e7ea0c";
    expect(readBuild({ VHOST_BROKER_REVISION: commit })).toEqual({
      name: pkg.name,
      version: pkg.version,
      revision: commit,
    });
    expect(readBuild({}).revision).toBe("unknown");
    expect(readBuild({ VHOST_BROKER_REVISION: " " }).revision).toBe("unknown");
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
