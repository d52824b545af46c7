import { describe, expect, it } from "vitest";
import { clusterSelection } from "./topology.ts";

describe("clusterSelection", () => {
  it.each([
    ["all", { serve: "all" }],
    ["none", { serve: "none" }],
    ["names:rabbitmq,openstack/bus", { serve: "names", names: ["rabbitmq", "openstack/bus"] }],
    ["annotation:example.com/served-by", { serve: "annotated", annotation: "example.com/served-by" }],
    [
      "annotation:example.com/served-by=vhost-broker",
      { serve: "annotated", annotation: "example.com/served-by", value: "vhost-broker" },
    ],
  ])("reads %s", (text, expected) => {
    expect(clusterSelection(text)).toEqual(expected);
  });
});
