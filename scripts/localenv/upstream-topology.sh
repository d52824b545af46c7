# The upstream RabbitMQ Messaging Topology Operator as an optional part: built from the Go module proxy
# into the cache on first use, run against the management cluster with its own thirteen rabbitmq.com
# CRDs in place of the project's seven (the field sets are the same). It reaches the broker through the
# `rabbitmq.com/operator-connection-uri` annotation of the RabbitmqCluster stand-in. `up` and `down` of
# the whole environment leave it alone, except that `down` stops it if it still runs.

UPSTREAM_TOPOLOGY_VERSION=${LOCALENV_UPSTREAM_TOPOLOGY_VERSION:-v1.20.1}

upstream_topology_dir() { echo "$CACHE/topology-operator/$UPSTREAM_TOPOLOGY_VERSION"; }

upstream_topology_built() { [[ -x $(upstream_topology_dir)/messaging-topology-operator && -d $(upstream_topology_dir)/crds ]]; }

# Starts the build in the background when the binary is missing, so that it overlaps work that leaves
# a core idle (a CI run's other test files); `up` waits for it. `down` stops it if it still runs.
upstream_topology_prebuild() {
  if upstream_topology_built || running upstream-topology-build; then return 0; fi
  mkdir -p "$CACHE/build"
  start upstream-topology-build -C "$CACHE/build" -- bash "$HERE/build.sh" topology-operator "$UPSTREAM_TOPOLOGY_VERSION"
  log "upstream-topology: building $UPSTREAM_TOPOLOGY_VERSION in the background, pid $(pid_of upstream-topology-build), log $STATE/logs/upstream-topology-build.log"
}

ensure_upstream_topology_built() {
  local log=$CACHE/build/topology-operator-$UPSTREAM_TOPOLOGY_VERSION.log
  if running upstream-topology-build; then
    log "upstream-topology: waiting for the background build (log: $STATE/logs/upstream-topology-build.log)"
    while running upstream-topology-build; do sleep 2; done
  fi
  upstream_topology_built && return 0
  log "building the messaging-topology-operator $UPSTREAM_TOPOLOGY_VERSION from the Go module proxy (minutes; log: $log)"
  mkdir -p "$CACHE/build"
  local t0=$SECONDS
  bash "$HERE/build.sh" topology-operator "$UPSTREAM_TOPOLOGY_VERSION" >"$log" 2>&1 ||
    die_with_log "$log" "the messaging-topology-operator $UPSTREAM_TOPOLOGY_VERSION did not build"
  log "built the messaging-topology-operator in $((SECONDS - t0))s"
}

upstream_kubectl() {
  "$CACHE/kubernetes/$(cat "$STATE/kubernetes-version")/kubectl" --kubeconfig "$STATE/management.kubeconfig" "$@"
}

# The same field manager as the tests' and the demo's CRD installs (harness/world/managed-bus.ts): an
# apply by it replaces what its previous apply set, so upstream's CRDs and the project's swap cleanly.
apply_crds() { upstream_kubectl apply --server-side --force-conflicts --field-manager=vhost-broker-localenv "$@" >/dev/null; }

# The kinds upstream serves beyond the project's seven; `down` removes their CRDs again.
upstream_only_crds() {
  local f
  for f in "$(upstream_topology_dir)"/crds/*.yaml; do
    [[ -f $ROOT/crds/$(basename "$f") ]] || sed -n 's/^  name: \(.*\)$/\1/p' "$f"
  done
}

# Each kind's controller logs "Starting workers" once its cache is synced. (Its health probe would
# answer before that, so it is switched off, as are metrics unless LOCALENV_UPSTREAM_TOPOLOGY_METRICS_ADDRESS
# names an address (plain HTTP), as the benchmark does; LOCALENV_UPSTREAM_TOPOLOGY_WORKERS sets its
# workers per kind.)
upstream_topology_ready() {
  (($(grep -c 'Starting workers' "$STATE/logs/upstream-topology.log") >= $(ls "$(upstream_topology_dir)"/crds/*.yaml | wc -l)))
}

upstream_topology_up() {
  running management-apiserver || die "upstream-topology: the local environment is not up (scripts/localenv.sh up)"
  ensure_upstream_topology_built
  local dir
  dir=$(upstream_topology_dir)
  # Upstream does not start without the RabbitmqCluster kind: the stand-in's CRD serves it here.
  apply_crds -f "$dir/crds" -f "$ROOT/crds/localenv/rabbitmq.com_rabbitmqclusters.yaml"
  upstream_kubectl wait --for condition=Established --timeout=60s -f "$dir/crds" \
    -f "$ROOT/crds/localenv/rabbitmq.com_rabbitmqclusters.yaml" >/dev/null ||
    die "upstream-topology: its CRDs are not established within 60 s"
  if ! running upstream-topology; then
    mkdir -p "$STATE/upstream-topology"
    start upstream-topology -C "$STATE/upstream-topology" -- \
      env KUBECONFIG="$STATE/management.kubeconfig" OPERATOR_NAMESPACE=upstream-topology ENABLE_WEBHOOKS=false \
      ${LOCALENV_UPSTREAM_TOPOLOGY_WORKERS:+MAX_CONCURRENT_RECONCILES=$LOCALENV_UPSTREAM_TOPOLOGY_WORKERS} \
      "$dir/messaging-topology-operator" --leader-elect=false --health-probe-bind-address=0 \
      --metrics-bind-address="${LOCALENV_UPSTREAM_TOPOLOGY_METRICS_ADDRESS:-0}" --metrics-secure=false
  fi
  wait_until upstream-topology 120 upstream_topology_ready
  log "upstream-topology: messaging-topology-operator $UPSTREAM_TOPOLOGY_VERSION runs, pid $(pid_of upstream-topology), log $STATE/logs/upstream-topology.log"
}

# Stops the process only; the CRDs go with the clusters' data.
upstream_topology_stop() {
  stop upstream-topology
  stop upstream-topology-build
}

# Stops the process and puts the project's CRDs back in place of upstream's.
upstream_topology_down() {
  upstream_topology_stop
  running management-apiserver || return 0
  [[ -d $(upstream_topology_dir)/crds ]] || return 0
  apply_crds -f "$ROOT/crds"
  local extra
  extra=$(upstream_only_crds)
  # shellcheck disable=SC2086 # one CRD name per word
  [[ -z $extra ]] || upstream_kubectl delete crd $extra --ignore-not-found --timeout=60s >/dev/null
  log "upstream-topology: stopped; the project's rabbitmq.com CRDs are back"
}

upstream_topology_status() {
  if running upstream-topology; then
    echo "upstream-topology  running  pid $(pid_of upstream-topology)  $UPSTREAM_TOPOLOGY_VERSION  $STATE/logs/upstream-topology.log"
  else
    echo "upstream-topology  stopped"
    return 1
  fi
}
