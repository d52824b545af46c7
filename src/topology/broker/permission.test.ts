import { describe, expect, it } from "vitest";
import type { ManagementClient } from "../../rabbitmq/client.ts";
import { ManagementTransientError } from "../../rabbitmq/errors.ts";
import { deletePermission } from "./permission.ts";

// The DELETE's answer and which of the user and the vhost the broker still holds.
function client(answer: "500" | "timeout", holds: { user: boolean; vhost: boolean }): ManagementClient {
  const fake = {
    delete: (path: string) =>
      Promise.reject(
        answer === "500"
          ? new ManagementTransientError("DELETE", path, "server", "500 no_such_user", 500)
          : new ManagementTransientError("DELETE", path, "timeout", "10000 ms"),
      ),
    find: (path: string) =>
      Promise.resolve(
        (path.startsWith("/api/users/") ? holds.user : holds.vhost) ? { name: "held" } : undefined,
      ),
  };
  return fake as unknown as ManagementClient;
}

const spec = { user: "app-v1", vhost: "app" };

describe("deleting a permission", () => {
  it("counts a 500 as done when the user or the vhost is gone: it took the permission along", async () => {
    expect(await deletePermission(client("500", { user: false, vhost: true }), spec)).toBe("absent");
    expect(await deletePermission(client("500", { user: true, vhost: false }), spec)).toBe("absent");
  });

  it("keeps a 500 a failure while both are there, and any other failure too", async () => {
    await expect(deletePermission(client("500", { user: true, vhost: true }), spec)).rejects.toThrow(
      /no_such_user/,
    );
    await expect(deletePermission(client("timeout", { user: false, vhost: false }), spec)).rejects.toThrow(
      /no answer in time/,
    );
  });
});
