import { describe, expect, it } from "vitest";
import { gen } from "../../../../harness/fakes/generation-fixtures.ts";
import { mintTarget, type MintResult } from "./mint.ts";
import type { ChildAction, ChildKind, GenerationChildren } from "./types.ts";

const create = (kind: ChildKind): ChildAction => ({ op: "create", kind, generation: 2 });
const remove = (kind: ChildKind): ChildAction => ({ op: "delete", kind, generation: 2 });

const cases: [string, GenerationChildren, MintResult][] = [
  [
    "nothing yet: password Secret, then the User importing it",
    gen(2, "absent", "absent", "absent"),
    {
      actions: [create("passwordSecret"), create("account")],
      outcome: { kind: "minting", waitingFor: "account" },
    },
  ],
  [
    "password there, no User",
    gen(2, "present", "absent", "absent"),
    { actions: [create("account")], outcome: { kind: "minting", waitingFor: "account" } },
  ],
  [
    "User not Ready: no Permission yet",
    gen(2, "present", "pending", "absent"),
    { actions: [], outcome: { kind: "minting", waitingFor: "account" } },
  ],
  [
    "User Ready: the Permission",
    gen(2, "present", "ready", "absent"),
    { actions: [create("access")], outcome: { kind: "minting", waitingFor: "access" } },
  ],
  [
    "Permission not Ready",
    gen(2, "present", "ready", "pending"),
    { actions: [], outcome: { kind: "minting", waitingFor: "access" } },
  ],
  ["all Ready", gen(2), { actions: [], outcome: { kind: "complete" } }],
  [
    "User refused",
    gen(2, "present", "refused:user limit reached", "absent"),
    { actions: [], outcome: { kind: "refused", piece: "account", message: "user limit reached" } },
  ],
  [
    "Permission refused",
    gen(2, "present", "ready", "refused:vhost gone"),
    { actions: [], outcome: { kind: "refused", piece: "access", message: "vhost gone" } },
  ],
  [
    "User being deleted: wait for it to go",
    gen(2, "present", "deleting", "absent"),
    { actions: [], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
  [
    "Permission being deleted: wait for it to go",
    gen(2, "present", "ready", "deleting"),
    { actions: [], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
  [
    "User lost under its Permission: the Permission goes with it, made again after the new User",
    gen(2, "present", "absent", "ready"),
    { actions: [remove("access"), create("account")], outcome: { kind: "minting", waitingFor: "account" } },
  ],
  [
    "User lost under a Permission not Ready yet: likewise",
    gen(2, "present", "absent", "pending"),
    { actions: [remove("access"), create("account")], outcome: { kind: "minting", waitingFor: "account" } },
  ],
  [
    "User lost, its Permission already going: the User made again meanwhile",
    gen(2, "present", "absent", "deleting"),
    { actions: [create("account")], outcome: { kind: "minting", waitingFor: "account" } },
  ],
  [
    "password lost under an existing User: start over",
    gen(2, "absent", "ready", "ready"),
    { actions: [remove("access"), remove("account")], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
  [
    "empty password under an existing User: start over",
    gen(2, "empty", "pending", "absent"),
    { actions: [remove("account")], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
  [
    "password lost, pieces already going",
    gen(2, "absent", "deleting", "deleting"),
    { actions: [], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
  [
    "empty password Secret alone: delete it so it is created afresh",
    gen(2, "empty", "absent", "absent"),
    { actions: [remove("passwordSecret")], outcome: { kind: "minting", waitingFor: "removal" } },
  ],
];

describe("mintTarget", () => {
  it.each(cases)("%s", (_name, children, expected) => {
    expect(mintTarget(children)).toEqual(expected);
  });

  it("never rewrites a password Secret that holds a password", () => {
    for (const [, children] of cases) {
      const rewrites = mintTarget(children).actions.filter((a) => a.kind === "passwordSecret");
      if (children.password === "present") expect(rewrites).toEqual([]);
    }
  });
});
