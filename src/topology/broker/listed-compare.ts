// Each kind's read back answered from a broker listing instead of a GET: which list endpoints the kind
// needs, and the kind's own comparison (the one its read back makes) on what they list. Pure: the
// listing is read elsewhere (listing.ts), once per broker and verification period.
import { matchingBinding } from "./binding.ts";
import { compareExchange } from "./exchange.ts";
import {
  bindingEndsKey,
  inVhostKey,
  permissionKey,
  type BrokerListing,
  type ListedResource,
} from "./listing.ts";
import { comparePermission } from "./permission.ts";
import { comparePolicy } from "./policy.ts";
import { compareQueue } from "./queue.ts";
import {
  DEFAULT_VHOST,
  readBack,
  type BindingSpec,
  type ExchangeSpec,
  type PermissionSpec,
  type PolicySpec,
  type QueueSpec,
  type ReadBack,
  type UserSpec,
  type VhostSpec,
} from "./specs.ts";
import { compareUser } from "./user.ts";
import { compareVhost } from "./vhost.ts";

export interface ListedCheck<S, R extends ListedResource = ListedResource> {
  /** The list endpoints the comparison reads. */
  resources: readonly R[];
  compare(listing: Pick<BrokerListing, R>, spec: S): ReadBack;
}

export const listedVhost: ListedCheck<VhostSpec, "vhosts" | "vhost-limits"> = {
  resources: ["vhosts", "vhost-limits"],
  compare: (listing, spec) =>
    // A vhost without limits is not in the limits' list.
    compareVhost(spec, listing.vhosts.get(spec.name), listing["vhost-limits"].get(spec.name) ?? {}),
};

export const listedUser: ListedCheck<UserSpec, "users" | "user-limits"> = {
  resources: ["users", "user-limits"],
  compare: (listing, spec) =>
    compareUser(spec, listing.users.get(spec.username), listing["user-limits"].get(spec.username) ?? {}),
};

export const listedPermission: ListedCheck<PermissionSpec, "permissions"> = {
  resources: ["permissions"],
  compare: (listing, spec) =>
    comparePermission(spec, listing.permissions.get(permissionKey(spec.vhost, spec.user))),
};

export const listedQueue: ListedCheck<QueueSpec, "queues"> = {
  resources: ["queues"],
  compare: (listing, spec) =>
    compareQueue(spec, listing.queues.get(inVhostKey(spec.vhost ?? DEFAULT_VHOST, spec.name))),
};

export const listedExchange: ListedCheck<ExchangeSpec, "exchanges"> = {
  resources: ["exchanges"],
  compare: (listing, spec) =>
    compareExchange(spec, listing.exchanges.get(inVhostKey(spec.vhost ?? DEFAULT_VHOST, spec.name))),
};

export const listedBinding: ListedCheck<BindingSpec, "bindings"> = {
  resources: ["bindings"],
  compare(listing, spec) {
    const ends = bindingEndsKey(
      spec.vhost ?? DEFAULT_VHOST,
      spec.source,
      spec.destinationType,
      spec.destination,
    );
    return readBack(matchingBinding(spec, listing.bindings.get(ends) ?? []) !== undefined, []);
  },
};

export const listedPolicy: ListedCheck<PolicySpec, "policies"> = {
  resources: ["policies"],
  compare: (listing, spec) =>
    comparePolicy(spec, listing.policies.get(inVhostKey(spec.vhost ?? DEFAULT_VHOST, spec.name))),
};
