import { describe, expect, it } from "vitest";
import { filePassword, readPasswordFile, type FileRead } from "./settings-password.ts";

const PATH = "/etc/vhost-broker/mariadb-password/password";
const read = (content: string): FileRead => ({ outcome: "read", content });

describe("the settings' password file", () => {
  it("is a new credential version when its content changed, the same while it did not", () => {
    const first = filePassword(PATH, read("pw-one\n"), undefined);
    expect(first).toEqual({ outcome: "ready", password: { password: "pw-one", generation: 1 } });
    if (first.outcome !== "ready") throw new Error("not ready");
    expect(filePassword(PATH, read("pw-one"), first.password)).toEqual(first);
    expect(filePassword(PATH, read("pw-two\r\n"), first.password)).toEqual({
      outcome: "ready",
      password: { password: "pw-two", generation: 2 },
    });
  });

  it("waits, naming the path and never the content, while the file is missing, unreadable or empty", () => {
    const held = { password: "pw-held", generation: 3 };
    const reasons = [
      filePassword(PATH, { outcome: "failed", code: "ENOENT" }, held),
      filePassword(PATH, { outcome: "failed", code: "EACCES" }, held),
      filePassword(PATH, read("\n"), held),
    ];
    expect(reasons).toEqual([
      {
        outcome: "waiting",
        reason: `the administrator's password file ${PATH} (mariadb-password-file) does not exist`,
      },
      {
        outcome: "waiting",
        reason: `the administrator's password file ${PATH} (mariadb-password-file) cannot be read (EACCES)`,
      },
      {
        outcome: "waiting",
        reason: `the administrator's password file ${PATH} (mariadb-password-file) is empty`,
      },
    ]);
    expect(JSON.stringify(reasons)).not.toContain("pw-held");
  });

  it("keeps a failed read's code only, never its message", async () => {
    const refused = Object.assign(new Error("EACCES: permission denied, open 'x' near s3cr3t"), {
      code: "EACCES",
    });
    expect(await readPasswordFile(() => Promise.reject(refused), PATH)).toEqual({
      outcome: "failed",
      code: "EACCES",
    });
    expect(await readPasswordFile(() => Promise.reject(new Error("odd")), PATH)).toEqual({
      outcome: "failed",
      code: "unreadable",
    });
    expect(await readPasswordFile(async (path) => `content of ${path}`, PATH)).toEqual(
      read(`content of ${PATH}`),
    );
  });
});
