import { describe, expect, it } from "vitest";
import { FakeClock } from "../../../harness/fakes/fake-clock.ts";
import { microTime } from "../../runtime/base/micro-time.ts";
import type { LeaseSpec } from "../../runtime/leadership/lease.ts";
import {
  checkedKinds,
  failures,
  nextStep,
  passed,
  resourceName,
  watchLease,
  type LeaseWatch,
  type Reads,
  type Subject,
} from "./verdict.ts";

const defaults = { "topology-controller": true, "sql-controller": false, "mariadb-orders": false };
const names = (switches = defaults) => checkedKinds(switches).map(resourceName).sort();

describe("checkedKinds", () => {
  it("by default: the order, the ControlPlane, the RabbitmqCluster and the seven rabbitmq.com kinds", () => {
    expect(names()).toEqual([
      "bindings.rabbitmq.com",
      "controlplanes.c5c3.io",
      "exchanges.rabbitmq.com",
      "permissions.rabbitmq.com",
      "policies.rabbitmq.com",
      "queues.rabbitmq.com",
      "rabbitmqclusters.rabbitmq.com",
      "rabbitmqvhosts.c5c3.io",
      "users.rabbitmq.com",
      "vhosts.rabbitmq.com",
    ]);
  });

  it("without the topology controller: still the order's children, which upstream's operator serves", () => {
    expect(names({ ...defaults, "topology-controller": false })).toEqual([
      "controlplanes.c5c3.io",
      "permissions.rabbitmq.com",
      "rabbitmqclusters.rabbitmq.com",
      "rabbitmqvhosts.c5c3.io",
      "users.rabbitmq.com",
      "vhosts.rabbitmq.com",
    ]);
  });

  it("with MariaDB orders and the SQL controller: their order, children, MariaDB and the four SQL kinds", () => {
    const mariadb = names({ ...defaults, "topology-controller": false, "mariadb-orders": true });
    expect(mariadb.filter((n) => !n.endsWith(".rabbitmq.com"))).toEqual([
      "controlplanes.c5c3.io",
      "databases.mariadb.osh.openstack.org",
      "grants.mariadb.osh.openstack.org",
      "mariadbdatabases.c5c3.io",
      "mariadbs.k8s.mariadb.com",
      "rabbitmqvhosts.c5c3.io",
      "users.mariadb.osh.openstack.org",
    ]);
    expect(names({ ...defaults, "sql-controller": true })).toContain("connections.mariadb.osh.openstack.org");
  });
});

const subject: Subject = {
  kinds: checkedKinds(defaults),
  namespace: "vb-system",
  lease: "vb-vhost-broker",
};

/** Reads of a healthy installation: every kind served and listed, the Lease renewed at `renewed`. */
function healthy(renewed: number, lease: LeaseSpec = {}): Reads {
  const discovery = new Map<string, { value: string[] }>();
  for (const kind of subject.kinds) {
    const served = discovery.get(kind.apiVersion)?.value ?? [];
    discovery.set(kind.apiVersion, { value: [...served, kind.plural] });
  }
  return {
    server: "https://10.96.0.1:443",
    discovery,
    lists: new Map(subject.kinds.map((k) => [resourceName(k), { value: true as const }])),
    lease: {
      value: {
        holderIdentity: "vb-vhost-broker-7d9f-abcde",
        leaseDurationSeconds: 15,
        renewTime: microTime(renewed),
        ...lease,
      },
    },
  };
}

/** The reads' Lease watched at the clock's time after `previous`. */
const watched = (reads: Reads, clock: FakeClock, previous?: LeaseWatch) =>
  watchLease(previous, "value" in reads.lease ? reads.lease.value : undefined, clock.monotonic());

describe("failures", () => {
  it("none when every kind is served and listable and the Lease was renewed within its duration", () => {
    const clock = new FakeClock();
    const reads = healthy(clock.now() - 14_000);
    expect(failures(subject, reads, watched(reads, clock), clock)).toEqual([]);
  });

  it("one line when the API server does not answer, instead of one per read", () => {
    const clock = new FakeClock();
    const reads = { ...healthy(clock.now()), unreachable: "connect ECONNREFUSED 10.96.0.1:443" };
    expect(failures(subject, reads, undefined, clock)).toEqual([
      "cannot reach the API server at https://10.96.0.1:443: connect ECONNREFUSED 10.96.0.1:443",
    ]);
  });

  it("names each kind whose CRD is missing or not established, and each the namespace's list refuses", () => {
    const clock = new FakeClock();
    const reads = healthy(clock.now());
    reads.discovery.set("c5c3.io/v1alpha1", { value: undefined });
    reads.discovery.set("rabbitmq.com/v1beta1", {
      value: ["vhosts", "users", "permissions", "queues", "exchanges", "bindings", "policies"],
    });
    reads.lists.set("vhosts.rabbitmq.com", {
      error:
        '403 Forbidden: vhosts.rabbitmq.com is forbidden: User "system:serviceaccount:vb-system:vb-vhost-broker-check" cannot list resource "vhosts"',
    });
    expect(failures(subject, reads, watched(reads, clock), clock)).toEqual([
      "c5c3.io/v1alpha1 is not served: the CRD controlplanes.c5c3.io is missing or not established",
      "c5c3.io/v1alpha1 is not served: the CRD rabbitmqvhosts.c5c3.io is missing or not established",
      'cannot list vhosts.rabbitmq.com: 403 Forbidden: vhosts.rabbitmq.com is forbidden: User "system:serviceaccount:vb-system:vb-vhost-broker-check" cannot list resource "vhosts"',
      "rabbitmq.com/v1beta1 does not serve rabbitmqclusters: the CRD rabbitmqclusters.rabbitmq.com is missing or not established",
    ]);
  });

  it("when no replica has led, when none leads, and when the Lease cannot be read", () => {
    const clock = new FakeClock();
    const lease = (value: Reads["lease"]) =>
      failures(subject, { ...healthy(clock.now()), lease: value }, undefined, clock);
    expect(lease({ value: undefined })).toEqual([
      "Lease vb-system/vb-vhost-broker does not exist: no replica of the operator has led",
    ]);
    // What a replica that steps down writes (runtime/leadership/lease.ts, releasedLease).
    expect(
      lease({ value: { holderIdentity: "", leaseDurationSeconds: 1, renewTime: microTime(clock.now()) } }),
    ).toEqual(["Lease vb-system/vb-vhost-broker has no holder: no replica of the operator leads"]);
    expect(lease({ value: {} })).toEqual([
      "Lease vb-system/vb-vhost-broker has no holder: no replica of the operator leads",
    ]);
    expect(lease({ error: "403 Forbidden: leases.coordination.k8s.io is forbidden" })).toEqual([
      "cannot read the Lease vb-system/vb-vhost-broker: 403 Forbidden: leases.coordination.k8s.io is forbidden",
    ]);
  });

  it("when the holder stopped renewing: its last renewal older than the duration, and unchanged since", () => {
    const clock = new FakeClock();
    const reads = healthy(clock.now() - 47_000);
    let watch = watched(reads, clock);
    clock.advance(2_000);
    watch = watched(reads, clock, watch);
    expect(failures(subject, reads, watch, clock)).toEqual([
      "Lease vb-system/vb-vhost-broker is held by vb-vhost-broker-7d9f-abcde but was last renewed 49s ago, not within its duration of 15s: the leader has stopped renewing it",
    ]);
  });

  it("passes a holder whose node's clock is off once its record is seen renewed, and fails it when renewals stop", () => {
    const clock = new FakeClock();
    // The holder's wall clock is 5 minutes behind this pod's: each renewal reads as old.
    const skewed = (at: number) => healthy(at - 300_000);
    let reads = skewed(clock.now());
    let watch = watched(reads, clock);
    expect(failures(subject, reads, watch, clock)).toHaveLength(1);
    clock.advance(2_000);
    reads = skewed(clock.now());
    watch = watched(reads, clock, watch);
    expect(failures(subject, reads, watch, clock)).toEqual([]);
    // Renewals stop: the record stays as last seen, and its change ages past the duration.
    clock.advance(15_000);
    watch = watched(reads, clock, watch);
    expect(failures(subject, reads, watch, clock)).toEqual([]);
    clock.advance(1);
    watch = watched(reads, clock, watch);
    expect(failures(subject, reads, watch, clock)).toHaveLength(1);
  });

  it("passes a renewal stamped ahead of this pod's clock by less than the duration", () => {
    const clock = new FakeClock();
    const reads = healthy(clock.now() + 10_000);
    expect(failures(subject, reads, watched(reads, clock), clock)).toEqual([]);
  });
});

describe("nextStep", () => {
  it("passes without failures, retries while the next attempt starts within the timeout, then fails", () => {
    expect(nextStep([], 500_000, 120_000, 2_000)).toEqual({ kind: "pass" });
    expect(nextStep(["x"], 0, 120_000, 2_000)).toEqual({ kind: "retry", inMs: 2_000 });
    expect(nextStep(["x"], 118_000, 120_000, 2_000)).toEqual({ kind: "retry", inMs: 2_000 });
    expect(nextStep(["x"], 118_001, 120_000, 2_000)).toEqual({ kind: "fail" });
  });
});

describe("passed", () => {
  it("says what was found", () => {
    const clock = new FakeClock();
    const reads = healthy(clock.now() - 3_000);
    const spec = "value" in reads.lease ? reads.lease.value : undefined;
    expect(passed(subject, spec, clock.now())).toBe(
      "10 kinds served and listable in vb-system; Lease vb-system/vb-vhost-broker held by vb-vhost-broker-7d9f-abcde, renewed 3s ago",
    );
  });
});
