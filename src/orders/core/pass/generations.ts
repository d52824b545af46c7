// The children: the container child (the Vhost CR), then the password generations with the successor
// check before a switch (../provision.ts). A pass stopped before the generations keeps the rotation
// state as read and delivers nothing; so does one whose child write failed.
import { PassBackends } from "../backends.ts";
import type { Backend } from "../kind.ts";
import { migrationNote } from "../migration.ts";
import { provision } from "../provision.ts";
import type { StepResult } from "../steps.ts";
import { keptDelivery, need, type OrderPass } from "./context.ts";

export async function generations<B extends Backend>(pass: OrderPass<B>): Promise<StepResult> {
  const { kind, deps, identity, order } = pass;
  const current = need(pass.backend);
  const resource = kind.resource(order, identity);
  pass.backends = new PassBackends(kind, deps.management, need(pass.controlPlane), current);
  const outcome = await provision(pass);
  if (outcome.kind === "stopped") {
    // Stopped on the way to a backend the order is not on yet: the delivered user stays where it is.
    const on = order.status?.backend;
    const placement =
      on !== undefined && on !== current.name
        ? { backend: on, migration: { from: on, to: current.name, phase: "Provisioning" as const } }
        : undefined;
    const note = migrationNote(kind.backendKind, placement?.migration);
    pass.update = {
      resource: { ...outcome.resource, message: outcome.resource.message + note },
      delivery: keptDelivery(order),
      resourceName: resource,
      placement,
    };
    return { wake: outcome.wake, stop: true };
  }
  pass.containers = outcome.containers;
  const live = outcome.rotation.passwordGeneration ?? 0;
  pass.rotation = outcome.rotation;
  pass.switchTo = outcome.switchTo;
  pass.listing = outcome.listing;
  pass.update = {
    resource: outcome.resource,
    delivery: keptDelivery(order),
    resourceName: resource,
    rotation: { state: outcome.rotation, username: live > 0 ? kind.userName(identity, live) : undefined },
  };
  pass.underWay = outcome.wake.kind !== "none";
  if (outcome.wake.kind === "backoff") {
    // A child write failed: the rotation state stays as read, and nothing is delivered this pass.
    pass.update = { resource: outcome.resource, delivery: keptDelivery(order), resourceName: resource };
    return { wake: outcome.wake, stop: true };
  }
  return { wake: outcome.wake };
}
