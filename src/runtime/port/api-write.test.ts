import { describe, expect, it } from "vitest";
import { apiWriteOf } from "./api-write.ts";

describe("apiWriteOf", () => {
  it("names the resource as kubectl does, the subresource and the verb", () => {
    const apply = "application/apply-patch+yaml";
    const merge = "application/merge-patch+json";
    expect(
      apiWriteOf("PATCH", "/apis/rabbitmq.com/v1beta1/namespaces/t/vhosts/a?fieldManager=x", apply),
    ).toEqual({ resource: "vhosts.rabbitmq.com", subresource: "", verb: "apply" });
    expect(apiWriteOf("PATCH", "/apis/c5c3.io/v1alpha1/namespaces/t/rabbitmqvhosts/a/status", merge)).toEqual(
      {
        resource: "rabbitmqvhosts.c5c3.io",
        subresource: "status",
        verb: "patch",
      },
    );
    expect(apiWriteOf("PATCH", "/apis/c5c3.io/v1alpha1/namespaces/t/rabbitmqvhosts/a", merge)).toMatchObject({
      subresource: "",
      verb: "patch",
    });
    expect(apiWriteOf("POST", "/api/v1/namespaces/t/events")).toEqual({
      resource: "events",
      subresource: "",
      verb: "create",
    });
    expect(apiWriteOf("PUT", "/apis/coordination.k8s.io/v1/namespaces/d/leases/l")).toEqual({
      resource: "leases.coordination.k8s.io",
      subresource: "",
      verb: "update",
    });
    expect(apiWriteOf("DELETE", "/api/v1/namespaces/t/secrets/s")?.verb).toBe("delete");
    expect(apiWriteOf("DELETE", "/api/v1/namespaces/t/secrets")?.verb).toBe("deletecollection");
  });

  it("tells a namespace's own path from a resource inside it, and cluster-scoped ones", () => {
    expect(apiWriteOf("POST", "/api/v1/namespaces")).toMatchObject({
      resource: "namespaces",
      verb: "create",
    });
    expect(apiWriteOf("DELETE", "/api/v1/namespaces/t")).toMatchObject({
      resource: "namespaces",
      verb: "delete",
    });
    expect(apiWriteOf("PUT", "/api/v1/namespaces/t/finalize")).toEqual({
      resource: "namespaces",
      subresource: "finalize",
      verb: "update",
    });
    expect(
      apiWriteOf("PATCH", "/apis/c5c3.io/v1alpha1/controlplanes/p", "application/merge-patch+json"),
    ).toEqual({
      resource: "controlplanes.c5c3.io",
      subresource: "",
      verb: "patch",
    });
  });

  it("counts no read and no path that names no resource", () => {
    expect(apiWriteOf("GET", "/api/v1/namespaces/t/secrets/s")).toBeUndefined();
    expect(apiWriteOf("POST", "/apis/authorization.k8s.io")).toBeUndefined();
    expect(apiWriteOf("POST", "/version")).toBeUndefined();
  });
});
