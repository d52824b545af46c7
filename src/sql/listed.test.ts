// The catalogue comparisons each kind answers a verification with: pure functions of a server's
// catalogue and the desired state.
import { describe, expect, it } from "vitest";
import { accountKey, grantKey, privilegeKey, type Catalogue } from "./statements/index.ts";
import { database } from "./kinds/database.ts";
import { grant } from "./kinds/grant.ts";
import { user } from "./kinds/user.ts";

const HASH = "*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19";

function catalogue(parts: Partial<Catalogue> = {}): Catalogue {
  return { schemata: new Map(), users: new Map(), privileges: new Map(), ...parts };
}

describe("a Database against the catalogue", () => {
  const state = { name: "nova", characterSet: "utf8", collate: "utf8_general_ci" };
  const listed = (c: Catalogue, s: Parameters<NonNullable<typeof database.listed>>[1] = state) =>
    database.listed?.(c, s);
  const row = (over = {}) => ({ charset: "utf8mb3", collation: "utf8mb3_general_ci", comment: "", ...over });

  it("is up to date when the schema is listed with its character set and collation", () => {
    expect(listed(catalogue({ schemata: new Map([["nova", row()]]) }))).toBe("database nova is up to date");
  });

  it("differs when the schema is missing, has another character set, or another claim's mark", () => {
    expect(listed(catalogue())).toBeUndefined();
    expect(listed(catalogue({ schemata: new Map([["nova", row({ charset: "latin1" })]]) }))).toBeUndefined();
    const marked = catalogue({ schemata: new Map([["nova", row({ comment: "vhost-broker claim other" })]]) });
    expect(listed(marked)).toBeUndefined();
    expect(listed(marked, { ...state, claim: "other" })).toBe("database nova is up to date");
  });
});

describe("a User against the catalogue", () => {
  const state = { name: "nova", host: "%", passwordHash: HASH, maxUserConnections: 0, requireX509: false };
  const row = (over = {}) => ({
    hash: HASH,
    plugin: "mysql_native_password",
    maxConnections: 0,
    sslType: "",
    ...over,
  });
  const listed = (c: Catalogue) => user.listed?.(c, state);

  it("is up to date when the account is listed with the password's hash, limit and requirement", () => {
    expect(listed(catalogue({ users: new Map([[accountKey("nova", "%"), row()]]) }))).toBe(
      "user 'nova'@'%' is up to date",
    );
  });

  it("differs when the account is missing, on another host, or has another hash or limit", () => {
    expect(listed(catalogue())).toBeUndefined();
    expect(listed(catalogue({ users: new Map([[accountKey("nova", "localhost"), row()]]) }))).toBeUndefined();
    expect(
      listed(catalogue({ users: new Map([[accountKey("nova", "%"), row({ hash: "*00" })]]) })),
    ).toBeUndefined();
    expect(
      listed(catalogue({ users: new Map([[accountKey("nova", "%"), row({ maxConnections: "10" })]]) })),
    ).toBeUndefined();
  });
});

describe("a Grant against the catalogue", () => {
  const state = {
    privileges: ["SELECT", "INSERT"],
    database: "nova_cell0",
    table: "*",
    username: "nova",
    host: "%",
    grantOption: false,
  };
  const listed = (c: Catalogue) => grant.listed?.(c, state);
  const rows = (...privileges: string[]) => privileges.map((privilege) => ({ privilege, grantable: "NO" }));

  it("files a database-level grant under its escaped pattern", () => {
    expect(grantKey(state)).toBe(privilegeKey("'nova'@'%'", "nova\\_cell0", "*"));
    expect(grantKey({ ...state, database: "*" })).toBe(privilegeKey("'nova'@'%'", "*", "*"));
  });

  it("is granted when every privilege is listed, naming those held beyond the spec", () => {
    const held = catalogue({ privileges: new Map([[grantKey(state), rows("SELECT", "INSERT", "DELETE")]]) });
    expect(listed(held)).toBe(
      "granted SELECT, INSERT on nova_cell0.* to 'nova'@'%'; the account also holds DELETE there, which grants being additive are not revoked",
    );
  });

  it("differs when a privilege is missing", () => {
    expect(listed(catalogue({ privileges: new Map([[grantKey(state), rows("SELECT")]]) }))).toBeUndefined();
    expect(listed(catalogue())).toBeUndefined();
  });
});
