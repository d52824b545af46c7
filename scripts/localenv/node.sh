# Nodes for the management cluster, as an optional part (`scripts/localenv.sh node up|down|status`):
# kubelets built from the Go module proxy at the environment's Kubernetes version, each with a private
# containerd from Debian (runc, the overlayfs snapshotter), a kube-scheduler built the same way, and a
# kube-controller-manager for the controllers that pods need and the environment's own one does not run
# (Deployments, ReplicaSets, kube-root-ca.crt, the pods of a deleted node). `up` and `down` of the whole
# environment leave the nodes alone, except that `down` stops them if they still run.
#
# Pods run with the host's network (hostNetwork): the environment's servers listen on loopback only,
# which no pod network reaches. Each node has an address of its own (198.18.0.1N/32 on lo, from the
# benchmarking range), so that a pod of each node can bind the same port on its pod IP, as pods of
# different nodes can; NODE_COUNT (LOCALENV_NODES, default 3) is enough for a Deployment of two to roll
# with a surge pod. A CNI configuration (Debian's bridge plugin) is only there to make the nodes Ready;
# no hostNetwork pod calls it.
#
# The nodes carry the taint $NODE_TAINT, so that only pods that tolerate it run on them: a Deployment
# another test leaves behind stays Pending, as it does without nodes.
#
# What these machines need (../shared/reference/local-control-plane.md): cgroup v1 (failCgroupV1: false,
# cgroupfs, no QoS cgroups), and root without CAP_SYS_RESOURCE, so that containerd must not pass the
# kubelet's oom_score_adj of -998 for a sandbox to runc (restrict_oom_score_adj); the sandbox image is a
# local pause program, since no registry is reachable. Images are imported with `ctr images import`.

NODE_COUNT=${LOCALENV_NODES:-3}
NODE_KCM_PORT=${LOCALENV_NODE_KCM_PORT:-27257}
NODE_SCHEDULER_PORT=${LOCALENV_NODE_SCHEDULER_PORT:-27259}
# Node i (1..NODE_COUNT): kubelet on its address at 27250+i, its health check on loopback at 27260+i.
NODE_KUBELET_PORT_BASE=${LOCALENV_NODE_KUBELET_PORT_BASE:-27250}
NODE_HEALTHZ_PORT_BASE=${LOCALENV_NODE_HEALTHZ_PORT_BASE:-27260}
NODE_TAINT_KEY=localenv.vhost-broker.io/node
NODE_TAINT="$NODE_TAINT_KEY=e2e:NoSchedule"
NODE_PAUSE_IMAGE=localenv.invalid/pause:1
NODE_PACKAGES=(containerd runc containernetworking-plugins)

node_dir() { echo "$STATE/node"; }
node_name() { echo "localenv-node-$1"; }
node_address() { echo "198.18.0.$((10 + $1))"; }
node_k8s_version() { cat "$STATE/kubernetes-version" 2>/dev/null || true; }
node_bin() { echo "$CACHE/kubernetes/$(node_k8s_version)/$1"; }
node_kubectl() { "$(node_bin kubectl)" --kubeconfig "$STATE/management.kubeconfig" "$@"; }

node_built() { [[ -x $(node_bin kubelet) && -x $(node_bin kube-scheduler) ]]; }
node_installed() { [[ -x /usr/bin/containerd && -x /usr/bin/ctr && -x /usr/sbin/runc && -x /usr/lib/cni/bridge ]]; }

# Debian's containerd, runc and CNI plugins. The package's own service is never started: the install
# runs under a policy-rc.d that denies every service start (one already in place is left as it is).
ensure_node_installed() {
  node_installed && return 0
  log "node: installing ${NODE_PACKAGES[*]} from Debian"
  mkdir -p "$STATE/logs"
  local policy=/usr/sbin/policy-rc.d ours=0 status=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# Written by vhost-broker localenv for the length of one apt-get install.\nexit 101\n' >"$policy"
    chmod +x "$policy"
    ours=1
  fi
  local wait=(-o DPkg::Lock::Timeout=300)
  { apt-get "${wait[@]}" update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq "${NODE_PACKAGES[@]}"; } \
    >"$STATE/logs/node-install.log" 2>&1 || status=$?
  ((ours)) && rm -f "$policy"
  ((status == 0)) || die_with_log "$STATE/logs/node-install.log" "node: apt-get install ${NODE_PACKAGES[*]} failed"
}

# The kubelet and kube-scheduler at the control plane's version, into the same cache folder.
ensure_node_built() {
  local version log
  version=$(node_k8s_version)
  [[ -n $version ]] || die "node: the local environment is not up (no $STATE/kubernetes-version)"
  node_built && return 0
  log=$CACHE/build/kubernetes-node-$version.log
  log "node: building the kubelet and kube-scheduler $version from the Go module proxy (log: $log)"
  mkdir -p "$CACHE/build"
  local t0=$SECONDS
  bash "$HERE/build.sh" node "$version" >"$log" 2>&1 || die_with_log "$log" "node: the kubelet $version did not build"
  log "node: built the kubelet and kube-scheduler in $((SECONDS - t0))s"
}

# The pod sandbox's image: a static program that waits in pause() and ends on SIGTERM or SIGINT, as
# registry.k8s.io/pause does, as an OCI archive made by hand (one layer, one file).
node_pause_archive() {
  local src key out work
  src=$(
    cat <<'C'
#include <signal.h>
#include <unistd.h>
static void done(int sig) { (void)sig; _exit(0); }
int main(void) {
  signal(SIGTERM, done);
  signal(SIGINT, done);
  for (;;) pause();
}
C
  )
  key=$(printf '%s\n%s\n' "$src" "$(declare -f node_pause_archive)" | sha256sum | cut -c1-16)
  out=$CACHE/node/pause-$key.tar
  if [[ ! -f $out ]]; then
    work=$CACHE/node/pause-$key.tmp
    rm -rf "$work" && mkdir -p "$work/rootfs" "$work/oci/blobs/sha256"
    printf '%s\n' "$src" >"$work/pause.c"
    gcc -Os -static -o "$work/rootfs/pause" "$work/pause.c" || die "node: cannot compile the pause program (gcc, libc6-dev)"
    strip "$work/rootfs/pause" 2>/dev/null || true
    tar -C "$work/rootfs" --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/layer.tar" pause
    local layer config manifest
    layer=$(sha256sum <"$work/layer.tar" | cut -d' ' -f1)
    cp "$work/layer.tar" "$work/oci/blobs/sha256/$layer"
    printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
      "$layer" >"$work/config.json"
    config=$(sha256sum <"$work/config.json" | cut -d' ' -f1)
    cp "$work/config.json" "$work/oci/blobs/sha256/$config"
    printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
      "$config" "$(stat -c %s "$work/config.json")" "$layer" "$(stat -c %s "$work/layer.tar")" >"$work/manifest.json"
    manifest=$(sha256sum <"$work/manifest.json" | cut -d' ' -f1)
    cp "$work/manifest.json" "$work/oci/blobs/sha256/$manifest"
    printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
      "$manifest" "$(stat -c %s "$work/manifest.json")" "$NODE_PAUSE_IMAGE" "${NODE_PAUSE_IMAGE##*:}" >"$work/oci/index.json"
    printf '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
    tar -C "$work/oci" -cf "$out.tmp" oci-layout index.json blobs
    mv "$out.tmp" "$out"
    rm -rf "$work"
  fi
  echo "$out"
}

# What `prebuild` runs in the background, and `up` before it starts anything.
node_install() {
  ensure_node_installed
  ensure_node_built
  node_pause_archive >/dev/null
}

# Starts the install and the build in the background when something is missing, so that they overlap
# work that leaves a core idle (a CI run's other test files); `up` waits for them.
node_prebuild() {
  if { node_installed && node_built; } || running node-build; then return 0; fi
  [[ -n $(node_k8s_version) ]] || die "node: the local environment is not up (no $STATE/kubernetes-version)"
  mkdir -p "$CACHE/build"
  start node-build -C "$CACHE/build" -- bash "$ROOT/scripts/localenv.sh" node install
  log "node: installing containerd and building the kubelet in the background, pid $(pid_of node-build), log $STATE/logs/node-build.log"
}

node_wait_for_prebuild() {
  running node-build || return 0
  log "node: waiting for the background install and build (log: $STATE/logs/node-build.log)"
  while running node-build; do sleep 2; done
}

node_ctr() {
  local i=$1
  shift
  ctr --address "$(node_dir)/$i/containerd/containerd.sock" --namespace k8s.io "$@"
}

node_write_containerd_config() {
  local i=$1 dir
  dir=$(node_dir)/$i/containerd
  mkdir -p "$dir/cni"
  cat >"$dir/config.toml" <<TOML
version = 2
root = "$dir/root"
state = "$dir/state"
oom_score = 0

[grpc]
  address = "$dir/containerd.sock"

[ttrpc]
  address = "$dir/containerd.sock.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "$dir/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$NODE_PAUSE_IMAGE"
  # Root here may not lower an oom_score_adj (no CAP_SYS_RESOURCE): runc refuses the kubelet's -998
  # for a sandbox ("can't get final child's PID from pipe: EOF") unless containerd clamps it.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$dir/cni"
TOML
  cat >"$dir/cni/10-localenv.conflist" <<CNI
{
  "cniVersion": "1.0.0",
  "name": "localenv-node-$i",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "vhbnode$i",
      "isGateway": true,
      "ipMasq": false,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.213.$i.0/24" }]], "dataDir": "$dir/cni-ipam" }
    },
    { "type": "loopback" }
  ]
}
CNI
}

node_write_kubelet_config() {
  local i=$1 dir
  dir=$(node_dir)/$i
  mkdir -p "$dir/kubelet" "$dir/pod-logs"
  cat >"$dir/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_address "$i")
port: $((NODE_KUBELET_PORT_BASE + i))
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $((NODE_HEALTHZ_PORT_BASE + i))
containerRuntimeEndpoint: unix://$dir/containerd/containerd.sock
podLogsDir: $dir/pod-logs
# The API server reaches the kubelet for logs and exec; nothing else can reach the node's address.
authentication:
  anonymous: { enabled: true }
  webhook: { enabled: false }
authorization: { mode: AlwaysAllow }
# cgroup v1 on these machines, and no systemd.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
failSwapOn: false
# Root here may not lower its own oom_score_adj.
oomScoreAdj: 0
# Imported images cannot be pulled again: never collect them. No eviction either (the root device's
# statistics cannot be read here).
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {}
localStorageCapacityIsolation: false
resolvConf: /etc/resolv.conf
registerNode: true
registerWithTaints:
  - { key: $NODE_TAINT_KEY, value: e2e, effect: NoSchedule }
serializeImagePulls: false
YAML
}

node_kubelet_healthy() { curl -sf "http://127.0.0.1:$((NODE_HEALTHZ_PORT_BASE + $1))/healthz" | grep -q ok; }

node_ready() {
  [[ $(node_kubectl get node "$(node_name "$1")" \
    -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}

# An address of its own for node i, on lo (the kubelet refuses a loopback address as a node IP), and
# its name in /etc/hosts: the API server reaches a kubelet (logs, exec) by the node's host name first.
NODE_HOSTS_MARK="# vhost-broker localenv node"

# Read whole before matching: under pipefail, `ip … | grep -q` fails when grep's early exit cuts ip off.
node_has_address() {
  local all
  all=$(ip -4 -o addr show dev lo)
  [[ $all == *" $1/32 "* ]]
}

node_add_address() {
  local a name
  a=$(node_address "$1")
  name=$(node_name "$1")
  node_has_address "$a" || ip addr add "$a/32" dev lo ||
    die "node: cannot add the node address $a/32 to lo (needs CAP_NET_ADMIN)"
  grep -q "^$a $name " /etc/hosts || echo "$a $name $NODE_HOSTS_MARK" >>/etc/hosts
}

node_remove_address() {
  local a
  a=$(node_address "$1")
  if node_has_address "$a"; then ip addr del "$a/32" dev lo || true; fi
}

# One node's line out of /etc/hosts; never for two nodes at once (the file is rewritten).
node_remove_host() {
  local a name kept
  a=$(node_address "$1")
  name=$(node_name "$1")
  if grep -q "^$a $name $NODE_HOSTS_MARK\$" /etc/hosts; then
    # Rewritten in place rather than replaced: /etc/hosts may be a mount.
    kept=$(grep -v "^$a $name $NODE_HOSTS_MARK\$" /etc/hosts)
    printf '%s\n' "$kept" >/etc/hosts
  fi
}

node_start_one() {
  local i=$1 dir name
  dir=$(node_dir)/$i
  name=$(node_name "$i")
  node_add_address "$i"
  node_write_containerd_config "$i"
  running "node-containerd-$i" || start "node-containerd-$i" -C "$dir" -- \
    /usr/bin/containerd --config "$dir/containerd/config.toml"
  wait_until "node-containerd-$i" 60 node_ctr "$i" version
  local images
  images=$(node_ctr "$i" images check "name==$NODE_PAUSE_IMAGE")
  if [[ $images != *complete* ]]; then
    node_ctr "$i" images import "$(node_pause_archive)" >/dev/null ||
      die "node: cannot import $NODE_PAUSE_IMAGE into node $i's containerd"
  fi
  node_write_kubelet_config "$i"
  running "node-kubelet-$i" || start "node-kubelet-$i" -C "$dir" "$((NODE_HEALTHZ_PORT_BASE + i))" -- \
    "$(node_bin kubelet)" --config "$dir/kubelet-config.yaml" --kubeconfig "$STATE/management.kubeconfig" \
    --hostname-override "$name" --node-ip "$(node_address "$i")" --root-dir "$dir/kubelet" \
    --cert-dir "$dir/kubelet/pki" --node-labels "localenv.vhost-broker.io/node=$i" --v=1
  wait_until "node-kubelet-$i" 120 node_kubelet_healthy "$i"
}

node_kcm_healthy() { curl -sfk "https://127.0.0.1:$NODE_KCM_PORT/healthz" | grep -q ok; }
node_scheduler_healthy() { curl -sfk "https://127.0.0.1:$NODE_SCHEDULER_PORT/healthz" | grep -q ok; }

node_up() {
  running management-apiserver || die "node: the local environment is not up (scripts/localenv.sh up)"
  node_wait_for_prebuild
  node_install
  local t0=$SECONDS i
  mkdir -p "$(node_dir)"
  running node-controller-manager || start node-controller-manager "$NODE_KCM_PORT" -- "$(node_bin kube-controller-manager)" \
    --kubeconfig "$STATE/management.kubeconfig" --leader-elect=false --use-service-account-credentials=false \
    --controllers deployment-controller,replicaset-controller,root-ca-certificate-publisher-controller,pod-garbage-collector-controller,node-lifecycle-controller \
    --root-ca-file "$STATE/pki/ca.crt" --bind-address 127.0.0.1 --secure-port "$NODE_KCM_PORT" \
    --authentication-skip-lookup=true --authorization-always-allow-paths /healthz
  running node-scheduler || start node-scheduler "$NODE_SCHEDULER_PORT" -- "$(node_bin kube-scheduler)" \
    --kubeconfig "$STATE/management.kubeconfig" --leader-elect=false \
    --bind-address 127.0.0.1 --secure-port "$NODE_SCHEDULER_PORT" \
    --authentication-skip-lookup=true --authorization-always-allow-paths /healthz,/readyz,/livez
  for ((i = 1; i <= NODE_COUNT; i++)); do node_start_one "$i"; done
  wait_until node-controller-manager 60 node_kcm_healthy
  wait_until node-scheduler 60 node_scheduler_healthy
  for ((i = 1; i <= NODE_COUNT; i++)); do wait_until "node-kubelet-$i" 120 node_ready "$i"; done
  echo "$NODE_COUNT" >"$(node_dir)/count"
  log "node: $NODE_COUNT nodes Ready in $((SECONDS - t0))s (taint $NODE_TAINT); logs in $STATE/logs/node-*.log"
}

# The nodes' pods go first, through their kubelets (10 s of grace), with nothing left to create or bind
# new ones; then the kubelets, whatever containers are left, the containerds and their mounts, the Node
# objects and the addresses.
node_down() {
  stop node-build
  local count i name
  count=$(cat "$(node_dir)/count" 2>/dev/null || echo "$NODE_COUNT")
  stop node-scheduler &
  stop node-controller-manager &
  wait
  if running management-apiserver; then
    for ((i = 1; i <= count; i++)); do
      name=$(node_name "$i")
      if running "node-kubelet-$i"; then
        node_kubectl delete pods --all-namespaces --field-selector "spec.nodeName=$name" --grace-period=10 \
          --timeout=60s --wait=true >/dev/null 2>&1 || true
      fi
      node_kubectl delete pods --all-namespaces --field-selector "spec.nodeName=$name" --force --grace-period=0 \
        >/dev/null 2>&1 || true
    done
  fi
  # Each part takes a second or two to end: the nodes go side by side.
  for ((i = 1; i <= count; i++)); do stop "node-kubelet-$i" & done
  wait
  for ((i = 1; i <= count; i++)); do node_down_one "$i" & done
  wait
  for ((i = 1; i <= count; i++)); do node_remove_host "$i"; done
  rm -rf "$(node_dir)"
  log "node: down"
}

# Node i once its kubelet is gone: its containers, its containerd and mounts, its Node and address.
node_down_one() {
  local i=$1 c
  if running "node-containerd-$i"; then
    for c in $(node_ctr "$i" tasks ls -q 2>/dev/null); do
      node_ctr "$i" tasks kill -s SIGKILL "$c" >/dev/null 2>&1 || true
    done
    for c in $(node_ctr "$i" tasks ls -q 2>/dev/null); do
      node_ctr "$i" tasks delete --force "$c" >/dev/null 2>&1 || true
    done
    for c in $(node_ctr "$i" containers ls -q 2>/dev/null); do
      node_ctr "$i" containers delete "$c" >/dev/null 2>&1 || true
    done
  fi
  stop "node-containerd-$i"
  node_unmount "$(node_dir)/$i"
  if running management-apiserver; then node_kubectl delete node "$(node_name "$i")" --ignore-not-found >/dev/null 2>&1 || true; fi
  node_remove_address "$i"
  if ip link show "vhbnode$i" >/dev/null 2>&1; then ip link delete "vhbnode$i" 2>/dev/null || true; fi
}

# Unmounts whatever the kubelet and containerd left mounted under a folder, deepest first.
node_unmount() {
  local m
  [[ -d $1 ]] || return 0
  while read -r m; do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
  done < <(awk -v d="$1/" 'index($2, d) == 1 { print $2 }' /proc/self/mounts | sort -r)
}

node_status() {
  local part all=0 count i
  count=$(cat "$(node_dir)/count" 2>/dev/null || echo "$NODE_COUNT")
  local parts=(node-controller-manager node-scheduler)
  for ((i = 1; i <= count; i++)); do parts+=("node-containerd-$i" "node-kubelet-$i"); done
  for part in "${parts[@]}"; do
    if running "$part"; then
      printf '%-31s running  pid %s\n' "$part" "$(pid_of "$part")"
    else
      printf '%-31s stopped\n' "$part"
      all=1
    fi
  done
  if ((all == 0)); then
    for ((i = 1; i <= count; i++)); do
      printf '%-31s %s  %s\n' "$(node_name "$i")" "$(node_ready "$i" && echo Ready || echo NotReady)" "$(node_address "$i")"
    done
  fi
  running node-build && echo "node-build                      running  pid $(pid_of node-build)"
  return $all
}

# Imports every tag of an OCI layout (scripts/image.sh writes one) into each node's containerd as
# BASE:<tag>, where a pod's image names it (no registry is reachable from here).
node_import() {
  local layout=$1 base=$2 count i
  [[ -f $layout/index.json && -n $base ]] || die "usage: $0 node import <OCI layout folder> <image name without tag>"
  count=$(cat "$(node_dir)/count" 2>/dev/null) || die "node: no nodes run (scripts/localenv.sh node up)"
  for ((i = 1; i <= count; i++)); do
    running "node-containerd-$i" || die "node: node $i's containerd does not run"
    tar -C "$layout" -cf - . | node_ctr "$i" images import --base-name "$base" - >/dev/null ||
      die "node: cannot import $layout into node $i's containerd"
  done
}

# The settings a test needs, one `export` a line.
node_env() {
  echo "export LOCALENV_NODE_COUNT=$(cat "$(node_dir)/count" 2>/dev/null || echo 0)"
  echo "export LOCALENV_NODE_TAINT_KEY=$NODE_TAINT_KEY"
}

node_command() {
  case ${1:-} in
    up) node_up ;;
    down) node_down ;;
    status) node_status ;;
    prebuild) node_prebuild ;;
    install) node_install ;;
    import) node_import "${2:-}" "${3:-}" ;;
    env) node_env ;;
    *) die "usage: $0 node up|down|status|prebuild|install|import|env" ;;
  esac
}

# For the environment's `down`: the nodes go first if anything of them is there.
node_stop_for_down() {
  [[ -d $(node_dir) ]] || running node-build || return 0
  node_down
}
