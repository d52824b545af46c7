import { describe, expect, it } from "vitest";
import { build } from "../base/build.ts";
import { Metrics } from "./metrics.ts";

describe("Metrics", () => {
  it("exports the build as vhost_broker_build_info, 1 with its version and revision", async () => {
    const text = await new Metrics({ processMetrics: false }).registry.metrics();
    expect(text).toContain(
      `vhost_broker_build_info{version="${build.version}",revision="${build.revision}"} 1`,
    );
  });
});
