// Where a User's name and password come from: the Secret named by importCredentialsSecret (labelled
// rabbitmq.com/topology-operator: "true", keys username and passwordHash or password), or a Secret
// `<name>-user-credentials` with a random username and password, generated once, owned by the User,
// labelled as the import Secrets are, and never regenerated.
import { randomBytes } from "node:crypto";
import { secretKind, userKind, type User } from "../../api/index.ts";
import type { UserCredentials } from "../broker/index.ts";
import { TOPOLOGY_SECRET_LABEL } from "../../api/contracts.ts";
import type { ControllerDeps } from "../deps.ts";
import { isConflict } from "../../runtime/port/kube.ts";
import { controllerReference } from "../../runtime/port/kube-objects.ts";
import { readSecret, secretRead, type SecretRead } from "../secrets.ts";

/** Only labelled Secrets are watched and cached (upstream 1.20), the generated one too. */
const watchedLabels = { [TOPOLOGY_SECRET_LABEL]: "true" };

export type CredentialsSource =
  | {
      outcome: "ready";
      username: string;
      credentials: UserCredentials;
      /** The Secret status.credentials names: the import Secret (upstream 1.20) or the generated one. */
      secretName: string;
      secretVersion: string;
    }
  | { outcome: "waiting" | "invalid"; reason: string };

export function generatedSecretName(user: User): string {
  return `${user.metadata.name ?? ""}-user-credentials`;
}

export async function userCredentials(deps: ControllerDeps, user: User): Promise<CredentialsSource> {
  const imported = user.spec.importCredentialsSecret?.name;
  return imported ? importedCredentials(deps, user, imported) : generatedCredentials(deps, user);
}

async function importedCredentials(
  deps: ControllerDeps,
  user: User,
  name: string,
): Promise<CredentialsSource> {
  const where = `Secret ${user.metadata.namespace}/${name}`;
  const secret = await readSecret(deps, user.metadata.namespace ?? "", name);
  if (!secret) return { outcome: "waiting", reason: `${where} not found` };
  // Only labelled Secrets are watched: an unlabelled one could change without the change arriving.
  if (secret.labels[TOPOLOGY_SECRET_LABEL] !== "true") {
    return { outcome: "invalid", reason: `${where} must carry the label ${TOPOLOGY_SECRET_LABEL}: "true"` };
  }
  return fromSecret(secret, where);
}

/**
 * As upstream reads the keys: a passwordHash key is taken as it is and wins over password (an empty
 * one makes a user that cannot log in with a password); otherwise password is hashed.
 */
function fromSecret(secret: SecretRead, where: string): CredentialsSource {
  const { username, password, passwordHash } = secret.values;
  if (!username) return { outcome: "invalid", reason: `${where} must hold the key username` };
  let credentials: UserCredentials;
  if (passwordHash !== undefined) credentials = { passwordHash };
  else if (password !== undefined) credentials = { password };
  else return { outcome: "invalid", reason: `${where} must hold the key passwordHash or password` };
  return {
    outcome: "ready",
    username,
    credentials,
    secretName: secret.name,
    secretVersion: secret.resourceVersion,
  };
}

async function generatedCredentials(deps: ControllerDeps, user: User): Promise<CredentialsSource> {
  const namespace = user.metadata.namespace ?? "";
  const name = generatedSecretName(user);
  const where = `Secret ${namespace}/${name}`;
  const existing = await readSecret(deps, namespace, name);
  if (existing) return fromSecret(await labelled(deps, namespace, existing), where);
  // A random name, as upstream generates it: Users of one name in two namespaces must not share a
  // broker user.
  const username = randomBytes(24).toString("base64url");
  const password = randomBytes(24).toString("base64url");
  let created: SecretRead | undefined;
  try {
    created = secretRead(
      await deps.kube.create(secretKind, {
        type: "Opaque",
        metadata: {
          name,
          namespace,
          labels: watchedLabels,
          ownerReferences: [controllerReference(userKind, user.metadata)],
        },
        data: {
          username: Buffer.from(username).toString("base64"),
          password: Buffer.from(password).toString("base64"),
        },
      }),
    );
  } catch (error) {
    // Created by an earlier pass whose answer was lost: read it rather than write a second password.
    if (!isConflict(error)) throw error;
    created = await readSecret(deps, namespace, name);
  }
  if (!created) return { outcome: "waiting", reason: `${where} was created but cannot be read yet` };
  deps.logger.info(
    { kind: "User", namespace, name: user.metadata.name, secret: name },
    "generated credentials",
  );
  return fromSecret(created, where);
}

/** A Secret generated before it was labelled gets the label, as upstream's CreateOrUpdate adds it. */
async function labelled(deps: ControllerDeps, namespace: string, secret: SecretRead): Promise<SecretRead> {
  if (secret.labels[TOPOLOGY_SECRET_LABEL] === "true") return secret;
  const { name, resourceVersion } = secret;
  const updated = await deps.kube.patchMetadata(
    secretKind,
    { metadata: { name, namespace, resourceVersion } },
    { labels: watchedLabels },
  );
  return secretRead(updated);
}
