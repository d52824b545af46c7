#!/usr/bin/env bash
# The local environment: two Kubernetes clusters (management and target), three RabbitMQ brokers with
# their management plugin (`rabbitmq` runs 4.3 from Debian sid, `rabbitmq-2` 3.10 from the machine's
# Debian 12, `rabbitmq-40` 4.0 from Debian 13; scripts/localenv/rabbitmq.sh), OpenBao and MariaDB, all as
# processes on loopback, and OpenStack's client libraries in a Python virtual environment. No Docker
# engine is needed.
#
#   scripts/localenv.sh up       build or install what is missing, start what is not running
#   scripts/localenv.sh down     stop exactly what `up` started and drop the clusters', broker's and database's data
#   scripts/localenv.sh status   say what runs and where (exit 0 only when everything runs)
#   scripts/localenv.sh stop PART   stop one part to test an outage; `up` starts it again. PART is
#       rabbitmq, rabbitmq-2 or rabbitmq-40 (its data kept), openbao (dev mode keeps its data in memory: `up` starts an empty one
#       with the same root token and mounts kv-v2 again), mariadb (its data kept) or management-apiserver
#       (its data is in etcd)
#   scripts/localenv.sh upstream-topology up|down|status   the optional upstream messaging-topology-
#       operator on the management cluster (built into the cache on first use): `up` installs its CRDs
#       in place of the project's rabbitmq.com ones and starts it; `down` stops it and puts the
#       project's CRDs back. The environment's `down` stops it too. `prebuild` starts its build in the
#       background when it is missing (CI's test runs do, so that it overlaps the other tests).
#   scripts/localenv.sh node up|down|status|prebuild   optional nodes for the management cluster
#       (kubelets with containerd, a scheduler; scripts/localenv/node.sh), stopped by `down` too.
#   scripts/localenv.sh rabbitmq-43 up|down|status   an optional second RabbitMQ 4.3 node (for the
#       benchmark's scale phase at 10,000 orders), started beside a running environment and added to
#       env.sh as RABBITMQ_43_*; stopped by `down` too.
#   scripts/localenv.sh promtool   install Debian's promtool when missing (`up` does too), print its path
#   scripts/localenv.sh faketime   install Debian's libfaketime when missing (`up` does too), print its path
#
# Binaries are cached outside the repository in $VHOST_BROKER_CACHE (default ~/.cache/vhost-broker);
# state, logs and pid files live in .localenv/ (or $LOCALENV_STATE). `up` writes .localenv/env.sh.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")/localenv" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
STATE=${LOCALENV_STATE:-$ROOT/.localenv}
# Absolute and without symbolic links: the parts are given paths under it and run in folders of it,
# which must stay valid after the checkout that started them is gone (a worktree whose .localenv is a
# link to another's, say).
mkdir -p "$STATE"
STATE=$(cd -P "$STATE" && pwd)
PARTS=(etcd management-apiserver management-controller-manager target-apiserver target-controller-manager
  rabbitmq-epmd rabbitmq rabbitmq-2 rabbitmq-40 openbao mariadb)

source "$HERE/lib.sh"
source "$HERE/kube.sh"
source "$HERE/rabbitmq.sh"
source "$HERE/openbao.sh"
source "$HERE/mariadb.sh"
source "$HERE/upstream-topology.sh"
source "$HERE/node.sh"
source "$HERE/promtool.sh"
source "$HERE/faketime.sh"
source "$HERE/oslo-venv-part.sh"

write_env() {
  local f=$STATE/env.sh
  cat >"$f.tmp" <<ENV
# Written by scripts/localenv.sh up. Source it: . .localenv/env.sh
export KUBECONFIG=$STATE/management.kubeconfig
export TARGET_KUBECONFIG=$STATE/target.kubeconfig
export KUBECTL=$(k8s_bin kubectl)
export HELM=$CACHE/helm/$HELM_VERSION/helm
export PROMTOOL=$PROMTOOL
export LIBFAKETIME=$LIBFAKETIME
export RABBITMQ_URL=amqp://$RABBITMQ_ADMIN_USERNAME:$(cat "$STATE/rabbitmq/admin-password")@127.0.0.1:$AMQP_PORT
export RABBITMQ_MANAGEMENT_URL=http://127.0.0.1:$MANAGEMENT_PORT
export RABBITMQ_ADMIN_USERNAME=$RABBITMQ_ADMIN_USERNAME
export RABBITMQ_ADMIN_PASSWORD=$(cat "$STATE/rabbitmq/admin-password")
export RABBITMQCTL=$STATE/rabbitmq/rabbitmqctl
export RABBITMQ_VERSION=$(rabbitmq_version rabbitmq)
export RABBITMQ_2_URL=amqp://$RABBITMQ_ADMIN_USERNAME:$(rabbitmq_admin_password rabbitmq-2)@127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-2]}
export RABBITMQ_2_MANAGEMENT_URL=http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-2]}
export RABBITMQ_2_ADMIN_USERNAME=$RABBITMQ_ADMIN_USERNAME
export RABBITMQ_2_ADMIN_PASSWORD=$(rabbitmq_admin_password rabbitmq-2)
export RABBITMQ_2_CTL=$STATE/rabbitmq-2/rabbitmqctl
export RABBITMQ_2_VERSION=$(rabbitmq_version rabbitmq-2)
export RABBITMQ_40_URL=amqp://$RABBITMQ_ADMIN_USERNAME:$(rabbitmq_admin_password rabbitmq-40)@127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-40]}
export RABBITMQ_40_MANAGEMENT_URL=http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-40]}
export RABBITMQ_40_ADMIN_USERNAME=$RABBITMQ_ADMIN_USERNAME
export RABBITMQ_40_ADMIN_PASSWORD=$(rabbitmq_admin_password rabbitmq-40)
export RABBITMQ_40_CTL=$STATE/rabbitmq-40/rabbitmqctl
export RABBITMQ_40_VERSION=$(rabbitmq_version rabbitmq-40)
$(if running rabbitmq-43; then rabbitmq_43_env; fi)
export OSLO_PYTHON=$OSLO_PYTHON
export BAO_ADDR=http://127.0.0.1:$BAO_PORT
export BAO_TOKEN=$(cat "$STATE/openbao/root-token")
export MARIADB_HOST=127.0.0.1
export MARIADB_PORT=$MARIADB_PORT
export MARIADB_ADMIN_USERNAME=$MARIADB_ADMIN_USERNAME
export MARIADB_ADMIN_PASSWORD=$(cat "$STATE/mariadb/admin-password")
export MARIADB=$STATE/mariadb/mariadb
export MARIADB_CA_FILE=$(mariadb_tls_dir)/ca.crt
export MARIADB_CLIENT_CERT_FILE=$(mariadb_tls_dir)/client.crt
export MARIADB_CLIENT_KEY_FILE=$(mariadb_tls_dir)/client.key
export LOCALENV_STATE=$STATE
export LOCALENV_ETCD_URL=http://127.0.0.1:$ETCD_PORT
export LOCALENV_K8S_BIN=$CACHE/kubernetes/$K8S_VERSION
ENV
  mv "$f.tmp" "$f"
  local name
  for name in "${RABBITMQ_INSTANCES[@]}"; do rabbitmq_write_ctl "$name"; done
  if running rabbitmq-43; then rabbitmq_write_ctl rabbitmq-43; fi
  # The mariadb client logged in as the administrator, its password read from a defaults file.
  cat >"$STATE/mariadb/mariadb" <<CLIENT
#!/usr/bin/env bash
exec mariadb --defaults-file=$STATE/mariadb/admin.cnf "\$@"
CLIENT
  chmod +x "$STATE/mariadb/mariadb"
}

up() {
  mkdir -p "$STATE/logs"
  local t0=$SECONDS
  # Builds that take minutes on a machine without them in the cache run in the background meanwhile.
  rabbitmq_prebuild
  oslo_venv_prebuild
  ensure_rabbitmq_installed
  # The second broker boots while the rest starts; it is waited for last.
  rabbitmq_start rabbitmq-2
  kube_up
  rabbitmq_up
  rabbitmq_start rabbitmq-40
  openbao_up
  mariadb_up
  rabbitmq_ready rabbitmq-40
  rabbitmq_ready rabbitmq-2
  ensure_oslo_venv
  ensure_promtool_installed
  ensure_faketime_installed
  write_env
  log "up in $((SECONDS - t0))s; source $STATE/env.sh"
  status
}

down() {
  # Builds `up` started in the background (an interrupted one starts afresh next time).
  stop rabbitmq-roots
  stop oslo-venv-build
  node_stop_for_down
  upstream_topology_stop
  mariadb_down
  openbao_down
  rabbitmq_down
  kube_down
  rm -rf "$STATE/etcd" "$STATE/rabbitmq/mnesia" "$STATE/rabbitmq-2/mnesia" "$STATE/rabbitmq-40/mnesia" "$STATE/rabbitmq-43/mnesia" "$STATE/openbao" "$STATE/mariadb/data" "$STATE/env.sh"
  log "down"
}

status() {
  local part all=0 where
  local -A addr=(
    [etcd]="http://127.0.0.1:$ETCD_PORT"
    [management-apiserver]="https://127.0.0.1:${API_PORT[management]} ($STATE/management.kubeconfig)"
    [management-controller-manager]="https://127.0.0.1:${KCM_PORT[management]}"
    [target-apiserver]="https://127.0.0.1:${API_PORT[target]} ($STATE/target.kubeconfig)"
    [target-controller-manager]="https://127.0.0.1:${KCM_PORT[target]}"
    [rabbitmq-epmd]="127.0.0.1:$EPMD_PORT"
    [rabbitmq]="amqp://127.0.0.1:$AMQP_PORT, http://127.0.0.1:$MANAGEMENT_PORT"
    [rabbitmq-2]="amqp://127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-2]}, http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-2]}"
    [rabbitmq-40]="amqp://127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-40]}, http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-40]}"
    [openbao]="http://127.0.0.1:$BAO_PORT"
    [mariadb]="mysql://127.0.0.1:$MARIADB_PORT"
  )
  for part in "${PARTS[@]}"; do
    if running "$part"; then
      where="running  pid $(pid_of "$part")  ${addr[$part]}"
    else
      where="stopped"
      all=1
    fi
    [[ ${1:-} == --quiet ]] || printf '%-31s %s\n' "$part" "$where"
  done
  if [[ $all == 0 && ${1:-} != --quiet ]]; then
    echo "versions: kubernetes $(cat "$STATE/kubernetes-version" 2>/dev/null), etcd $ETCD_VERSION," \
      "rabbitmq $(rabbitmq_version rabbitmq), rabbitmq-2 $(rabbitmq_version rabbitmq-2)," \
      "rabbitmq-40 $(rabbitmq_version rabbitmq-40), openbao $(openbao_version), mariadb $(mariadb_version)"
    echo "env: . $STATE/env.sh"
  fi
  return $all
}

stop_part() {
  case $1 in
    rabbitmq | rabbitmq-2 | rabbitmq-40) rabbitmq_down "$1" ;;
    openbao) openbao_down ;;
    mariadb) mariadb_down ;;
    management-apiserver | target-apiserver | etcd) stop "$1" ;;
    *) die "stop: only rabbitmq, rabbitmq-2, rabbitmq-40, openbao, mariadb, etcd, management-apiserver or target-apiserver can be stopped on its own" ;;
  esac
  log "$1 stopped; \`up\` starts it again"
}

case ${1:-} in
  up) up ;;
  stop) stop_part "${2:-}" ;;
  down) down ;;
  status) status "${2:-}" ;;
  upstream-topology)
    case ${2:-} in
      up) upstream_topology_up ;;
      down) upstream_topology_down ;;
      status) upstream_topology_status ;;
      prebuild) upstream_topology_prebuild ;;
      *) die "usage: $0 upstream-topology up|down|status|prebuild" ;;
    esac
    ;;
  node) node_command "${@:2}" ;;
  rabbitmq-43) rabbitmq_43_part "${2:-}" ;;
  promtool) promtool_command ;;
  faketime) faketime_command ;;
  *)
    echo "usage: $0 up | down | status [--quiet] | stop rabbitmq|rabbitmq-2|rabbitmq-40|openbao|mariadb|management-apiserver | upstream-topology up|down|status|prebuild | node up|down|status|prebuild | rabbitmq-43 up|down|status | promtool | faketime" >&2
    exit 2
    ;;
esac
