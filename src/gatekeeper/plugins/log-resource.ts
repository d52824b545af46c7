// log-resource (validating, custom group, off by default): logs every gated object at the entry of its
// pass, secrets redacted and managedFields left out, for support and audit.
import { redact } from "../../runtime/base/redact.ts";
import type { DeepReadonly, GatedKindName, GatekeeperPlugin, ValidatingPlugin } from "../api.ts";
import { GATEKEEPER_API_VERSION } from "../api.ts";
import { gatedKinds } from "../kinds.ts";

type Resource = DeepReadonly<{ metadata: { name?: string; namespace?: string; managedFields?: unknown } }>;

export function loggedForm(object: Resource): unknown {
  const metadata: Record<string, unknown> = { ...object.metadata };
  delete metadata["managedFields"];
  return redact({ ...object, metadata });
}

const logAtEntry: ValidatingPlugin<Resource, unknown> = {
  entry(context, object) {
    const { namespace = "", name = "" } = object.metadata;
    context.log.info(
      { resource: loggedForm(object), teardown: context.teardown },
      `${context.kind} ${namespace}/${name} at the entry of its pass`,
    );
  },
};

const plugin: GatekeeperPlugin = {
  apiVersion: GATEKEEPER_API_VERSION,
  name: "log-resource",
  validating: Object.fromEntries(
    Object.keys(gatedKinds).map((kind) => [kind as GatedKindName, logAtEntry]),
  ) as GatekeeperPlugin["validating"],
};

export default plugin;
