// User: the name and password from its credentials Secret (sent as a salted SHA-512 hash, or a
// given hash), tags and limits; status.username, status.credentials and PasswordSynced. A new
// username in the credentials Secret replaces the broker user named in status.username. Deleting
// removes the broker user named in status.username.
import { listedUser } from "../broker/listed-compare.ts";
import { UserSchema, userKind, type User } from "../../api/index.ts";
import { declareUser, deleteUser, readBackUser, type UserSpec } from "../broker/index.ts";
import { passwordNotSynced, passwordSynced } from "../upstream.ts";
import type { ControllerDeps } from "../deps.ts";
import type { TopologyKind, TopologyDesired } from "../backend.ts";
import { referencedName } from "../raw-fields.ts";
import { userCredentials } from "./user-credentials.ts";

async function userDesired(deps: ControllerDeps, user: User): Promise<TopologyDesired<UserSpec>> {
  const source = await userCredentials(deps, user);
  if (source.outcome !== "ready") return source;
  const { credentials } = source;
  const previous = user.status?.username;
  return {
    outcome: "ready",
    spec: {
      username: source.username,
      credentials,
      ...(user.spec.tags === undefined ? {} : { tags: user.spec.tags }),
      ...(user.spec.limits === undefined ? {} : { limits: user.spec.limits }),
    },
    secretVersion: source.secretVersion,
    secrets: ["password" in credentials ? credentials.password : credentials.passwordHash],
    statusFields: { username: source.username, credentials: { name: source.secretName } },
    ...(previous && previous !== source.username
      ? { supersedes: async (client) => void (await deleteUser(client, previous)) }
      : {}),
  };
}

export const user: TopologyKind<User, UserSpec> = {
  kind: userKind,
  schema: UserSchema,
  secretsOf: (spec) => {
    const imported = referencedName(spec["importCredentialsSecret"]);
    return imported ? [imported] : [];
  },
  // The generated credentials Secret, when no Secret is imported.
  ownSecrets: true,
  desired: userDesired,
  declare: declareUser,
  readBack: readBackUser,
  listed: listedUser,
  async remove(_deps, client, user) {
    // Without status.username the user was never declared by anyone we know of.
    const username = user.status?.username;
    if (username) await deleteUser(client, username);
  },
  extraConditions: { applied: [passwordSynced()], failed: (message) => [passwordNotSynced(message)] },
};
