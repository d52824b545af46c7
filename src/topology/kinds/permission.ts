// Permission: a user's configure, write and read patterns on a vhost. With userReference the user's
// name is the referenced User's status.username (not ready until it has one), and the Permission
// gets a controller owner reference to that User, as upstream sets it.
import { listedPermission } from "../broker/listed-compare.ts";
import {
  PermissionSchema,
  UserSchema,
  permissionKind,
  userKind,
  type Permission,
  type User,
} from "../../api/index.ts";
import {
  declarePermission,
  deletePermission,
  readBackPermission,
  type PermissionSpec,
} from "../broker/index.ts";
import type { ControllerDeps } from "../deps.ts";
import type { TopologyKind, TopologyDesired } from "../backend.ts";
import { fieldsOf, referencedName } from "../raw-fields.ts";
import { managementRequests } from "../../external/index.ts";
import type { CacheIndex } from "../../runtime/port/object-index.ts";
import { asKubeObject, controllerReference } from "../../runtime/port/kube-objects.ts";

async function referencedUser(
  deps: ControllerDeps,
  permission: Permission,
  name: string,
): Promise<User | undefined> {
  const raw = await deps.kube.get(userKind, {
    namespace: permission.metadata.namespace ?? "",
    name,
  });
  return raw === undefined ? undefined : UserSchema.parse(raw);
}

async function ensureOwnedBy(deps: ControllerDeps, permission: Permission, user: User): Promise<void> {
  const owners = permission.metadata.ownerReferences ?? [];
  if (owners.some((o) => o.uid === user.metadata.uid) || owners.some((o) => o.controller)) return;
  const ownerReferences = [...owners, controllerReference(userKind, user.metadata)];
  const updated = await deps.kube.patchMetadata(permissionKind, asKubeObject(permission), {
    ownerReferences,
  });
  permission.metadata.ownerReferences = ownerReferences;
  // The status write of this pass carries the new resourceVersion.
  permission.metadata.resourceVersion =
    updated.metadata?.resourceVersion ?? permission.metadata.resourceVersion;
}

async function permissionDesired(
  deps: ControllerDeps,
  permission: Permission,
): Promise<TopologyDesired<PermissionSpec>> {
  const { spec } = permission;
  let user = spec.user;
  if (!user) {
    const reference = spec.userReference?.name;
    if (!reference)
      return { outcome: "invalid", reason: "one of spec.user and spec.userReference is required" };
    const found = await referencedUser(deps, permission, reference);
    if (!found) return { outcome: "waiting", reason: `User ${reference} not found` };
    await ensureOwnedBy(deps, permission, found);
    user = found.status?.username;
    if (!user) return { outcome: "waiting", reason: `User ${reference} has no status.username yet` };
    return {
      outcome: "ready",
      spec: { user, vhost: spec.vhost, permissions: spec.permissions },
      ...(found.metadata.uid ? { sourceUid: found.metadata.uid } : {}),
    };
  }
  return { outcome: "ready", spec: { user, vhost: spec.vhost, permissions: spec.permissions } };
}

export const permission: TopologyKind<Permission, PermissionSpec> = {
  kind: permissionKind,
  schema: PermissionSchema,
  secretsOf: () => [],
  // A User's change wakes the Permissions that wait for its username.
  watches: (caches) => [
    {
      kind: { ...userKind, namespaced: true },
      clusters: "management",
      map: (user) =>
        managementRequests(
          caches.cachedByIndex(
            "",
            permissionKind,
            byUser,
            user.metadata?.namespace ?? "",
            `${userKind.kind}/${user.metadata?.name ?? ""}`,
          ),
        ),
    },
  ],
  desired: permissionDesired,
  declare: declarePermission,
  readBack: readBackPermission,
  listed: listedPermission,
  async remove(deps, client, permission) {
    const reference = permission.spec.userReference?.name;
    const user =
      permission.spec.user ??
      (reference ? (await referencedUser(deps, permission, reference))?.status?.username : undefined);
    // A User already gone took its permissions with it on the broker.
    if (user) await deletePermission(client, { user, vhost: permission.spec.vhost });
  },
};

/**
 * The Permissions by the User they wait for (`User/<name>`), from their raw spec: filed once per change
 * of each rather than parsed for every one of them on each change of a User.
 */
const byUser: CacheIndex = {
  name: "depends-on",
  values: (object) => {
    const reference = referencedName(fieldsOf(fieldsOf(object)?.["spec"])?.["userReference"]);
    return reference ? [`${userKind.kind}/${reference}`] : [];
  },
};
