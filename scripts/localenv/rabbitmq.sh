# RabbitMQ from Debian's packages with the management plugin, run as nodes on loopback, each with its
# own ports, node name and state under $STATE/<instance>. Three instances: `rabbitmq`, the broker every
# test uses, `rabbitmq-2`, a second broker for the tests and benchmark phases that need two (a lane per
# broker), and `rabbitmq-40`. All register with one epmd of their own on a private port, which keeps
# them apart from any other Erlang node on the machine and lets `down` stop it by pid. A fourth,
# `rabbitmq-43`, is a second node of 4.3 that only `localenv.sh rabbitmq-43 up` starts: the benchmark's
# scale phase needs it for 10,000 orders, more vhosts than one 4.3 node holds within this machine's
# file descriptors (three per vhost, docs/performance.md), and no test does.

RABBITMQ_INSTANCES=(rabbitmq rabbitmq-2 rabbitmq-40)
RABBITMQ_OPTIONAL=(rabbitmq-43)
# Where each node's RabbitMQ comes from: `host` is the machine's own Debian 12 package (3.10); a suite
# is a root filesystem of that Debian suite built into the cache (debian-root.sh): sid carries 4.3,
# trixie 4.0. The broker every test uses runs 4.3, the second one 3.10, so that an ordinary run
# exercises both majors; 4.0 is a third node, for what differs between 4.x releases.
declare -A RABBITMQ_SUITE=([rabbitmq]=${LOCALENV_RABBITMQ_SUITE:-sid} [rabbitmq-2]=${LOCALENV_RABBITMQ_2_SUITE:-host}
  [rabbitmq-40]=${LOCALENV_RABBITMQ_40_SUITE:-trixie} [rabbitmq-43]=${LOCALENV_RABBITMQ_SUITE:-sid})
declare -A RABBITMQ_AMQP_PORT=([rabbitmq]=${LOCALENV_AMQP_PORT:-25680} [rabbitmq-2]=${LOCALENV_AMQP_2_PORT:-25684}
  [rabbitmq-40]=${LOCALENV_AMQP_40_PORT:-25687} [rabbitmq-43]=${LOCALENV_AMQP_43_PORT:-25690})
declare -A RABBITMQ_MANAGEMENT_PORT=([rabbitmq]=${LOCALENV_RABBITMQ_MANAGEMENT_PORT:-25681}
  [rabbitmq-2]=${LOCALENV_RABBITMQ_2_MANAGEMENT_PORT:-25685} [rabbitmq-40]=${LOCALENV_RABBITMQ_40_MANAGEMENT_PORT:-25688}
  [rabbitmq-43]=${LOCALENV_RABBITMQ_43_MANAGEMENT_PORT:-25691})
declare -A RABBITMQ_DIST_PORT=([rabbitmq]=${LOCALENV_RABBITMQ_DIST_PORT:-25682}
  [rabbitmq-2]=${LOCALENV_RABBITMQ_2_DIST_PORT:-25686} [rabbitmq-40]=${LOCALENV_RABBITMQ_40_DIST_PORT:-25689}
  [rabbitmq-43]=${LOCALENV_RABBITMQ_43_DIST_PORT:-25692})
declare -A RABBITMQ_NODE=([rabbitmq]=localenv@localhost [rabbitmq-2]=localenv2@localhost [rabbitmq-40]=localenv40@localhost
  [rabbitmq-43]=localenv43@localhost)
AMQP_PORT=${RABBITMQ_AMQP_PORT[rabbitmq]}
MANAGEMENT_PORT=${RABBITMQ_MANAGEMENT_PORT[rabbitmq]}
EPMD_PORT=${LOCALENV_EPMD_PORT:-25683}
RABBITMQ_ADMIN_USERNAME=vhost-broker-admin

rabbitmq_root() { echo "$CACHE/debian-root/${RABBITMQ_SUITE[$1]}"; }

# rabbitmq_env_lines INSTANCE: the node's environment as NAME=VALUE lines (for its start and for
# rabbitmqctl). A node of a root filesystem sees its state folder bound at /localenv.
rabbitmq_env_lines() {
  local dir=$STATE/$1
  [[ ${RABBITMQ_SUITE[$1]} == host ]] || dir=/localenv
  cat <<ENV
HOME=$dir/home
ERL_EPMD_PORT=$EPMD_PORT
RABBITMQ_NODENAME=${RABBITMQ_NODE[$1]}
RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf
RABBITMQ_CONFIG_FILE=$dir/rabbitmq.conf
RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins
RABBITMQ_MNESIA_BASE=$dir/mnesia
RABBITMQ_LOG_BASE=$dir/log
RABBITMQ_DIST_PORT=${RABBITMQ_DIST_PORT[$1]}
RABBITMQ_PID_FILE=$dir/rabbitmq.pid
ERL_CRASH_DUMP=$dir/log/erl_crash.dump
ENV
}

# rabbitmq_command INSTANCE PROGRAM: sets RABBITMQ_ARGV to the command line that runs
# /usr/lib/rabbitmq/bin/PROGRAM in the node's environment. A root filesystem's node runs in a mount
# namespace of its own, where its state folder is bound at /localenv (gone with the process); it runs
# as root there as it does on the host, and rabbitmqctl is called directly (sid's /usr/sbin wrapper
# passes its arguments through a shell, which expands a `$` in a user name away).
rabbitmq_command() {
  local name=$1 program=/usr/lib/rabbitmq/bin/$2 root
  local -a env
  mapfile -t env < <(rabbitmq_env_lines "$name")
  if [[ ${RABBITMQ_SUITE[$name]} == host ]]; then
    RABBITMQ_ARGV=(env "${env[@]}" "$program")
    return
  fi
  root=$(rabbitmq_root "$name")
  # /proc for the node's memory monitor: the host's processes are visible there, which is harmless for
  # a broker (no maintainer script runs in this namespace).
  # shellcheck disable=SC2016 # expanded by that sh
  RABBITMQ_ARGV=(unshare --mount --propagation private sh -c
    'mount --bind "$1" "$2/localenv" && mount -t proc proc "$2/proc" && shift 2 && exec chroot "$@"'
    sh "$STATE/$name" "$root" "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "${env[@]}" "$program")
}

# rabbitmq_write_ctl INSTANCE: $STATE/INSTANCE/rabbitmqctl, rabbitmqctl on that node, for tests that act
# on the broker as its operator would.
rabbitmq_write_ctl() {
  local RABBITMQ_ARGV
  rabbitmq_command "$1" rabbitmqctl
  {
    echo '#!/usr/bin/env bash'
    printf 'exec'
    printf ' %q' "${RABBITMQ_ARGV[@]}"
    printf ' "$@"\n'
  } >"$STATE/$1/rabbitmqctl"
  chmod +x "$STATE/$1/rabbitmqctl"
}

# The root filesystems the nodes need, built in the background from the start of `up` (minutes on a
# machine without them in the cache) in one job, since sid's is built from trixie's; a node's start
# waits for it. The build runs the suites' maintainer scripts in a pid namespace of their own, so it
# is safe beside running nodes (debian-root.sh).
rabbitmq_suites_missing() {
  local name suite
  for name in "${RABBITMQ_INSTANCES[@]}"; do
    suite=${RABBITMQ_SUITE[$name]}
    [[ $suite == host || -s $CACHE/debian-root/$suite/.built ]] || echo "$suite"
  done | sort -u
}

rabbitmq_prebuild() {
  local missing
  missing=$(rabbitmq_suites_missing)
  [[ -z $missing ]] && return 0
  running rabbitmq-roots && return 0
  mkdir -p "$CACHE/build"
  # shellcheck disable=SC2086 # one suite per word
  start rabbitmq-roots -C "$CACHE/build" -- env VHOST_BROKER_CACHE="$CACHE" \
    bash -c 'for suite; do bash "$0" "$suite" || exit; done' \
    "$HERE/debian-root.sh" $missing
  log "rabbitmq-roots: building $(echo $missing) in the background, pid $(pid_of rabbitmq-roots), log $STATE/logs/rabbitmq-roots.log"
}

ensure_rabbitmq_root() {
  local suite=$1
  [[ $suite == host || -s $CACHE/debian-root/$suite/.built ]] && return 0
  if running rabbitmq-roots; then
    log "rabbitmq-roots: waiting for the background build (log: $STATE/logs/rabbitmq-roots.log)"
    while running rabbitmq-roots; do sleep 2; done
  fi
  [[ -s $CACHE/debian-root/$suite/.built ]] && return 0
  log "rabbitmq: building the root filesystem of Debian $suite (minutes; log: $STATE/logs/debian-root-$suite.log)"
  VHOST_BROKER_CACHE=$CACHE bash "$HERE/debian-root.sh" "$suite" >"$STATE/logs/debian-root-$suite.log" 2>&1 &&
    [[ -s $CACHE/debian-root/$suite/.built ]] ||
    die_with_log "$STATE/logs/debian-root-$suite.log" "rabbitmq: the root filesystem of Debian $suite did not build"
}

ensure_rabbitmq_installed() {
  [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] && return 0
  log "installing rabbitmq-server from Debian"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rabbitmq-server; } \
    >"$STATE/logs/rabbitmq-install.log" 2>&1 ||
    die_with_log "$STATE/logs/rabbitmq-install.log" "rabbitmq: apt-get install rabbitmq-server failed"
}

rabbitmq_admin_password() { cat "$STATE/$1/admin-password"; }

# management INSTANCE PATH [CURL ARGS...]: the instance's management API as the operator's administrator.
management() {
  curl -sf -u "$RABBITMQ_ADMIN_USERNAME:$(rabbitmq_admin_password "$1")" \
    "http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[$1]}/api/$2" "${@:3}"
}

# The management API answers (a 401 counts: tests may delete guest, as the operator can be told to).
management_answers() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[$1]}/api/overview")
  [[ $code == 200 || $code == 401 ]]
}

# rabbitmq_start INSTANCE: writes its configuration and starts its node (and the shared epmd) unless
# running; returns at once, so that a broker boots while the other parts start.
rabbitmq_start() {
  local name=$1 dir=$STATE/$1 suite=${RABBITMQ_SUITE[$1]}
  # The machine's own package serves the `host` suite and the nodes' shared epmd.
  ensure_rabbitmq_installed
  ensure_rabbitmq_root "$suite"
  mkdir -p "$STATE/logs" "$dir"
  # A node's data is its version's: a node of another suite starts empty (3.10's data cannot boot 4.3).
  if [[ $(cat "$dir/suite" 2>/dev/null) != "$suite" ]] && ! running "$name"; then
    rm -rf "$dir/mnesia" "$dir/home"
    echo "$suite" >"$dir/suite"
  fi
  mkdir -p "$dir/home" "$dir/mnesia" "$dir/log"
  [[ -f $dir/admin-password ]] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$dir/admin-password"
  # The node's distribution port: RabbitMQ 3.10 takes it from this file (RABBITMQ_DIST_PORT in the
  # environment alone left both nodes on the default 25672, where the second could not start).
  echo "DIST_PORT=${RABBITMQ_DIST_PORT[$name]}" >"$dir/rabbitmq-env.conf"
  cat >"$dir/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:${RABBITMQ_AMQP_PORT[$name]}
management.tcp.ip = 127.0.0.1
management.tcp.port = ${RABBITMQ_MANAGEMENT_PORT[$name]}
log.console = true
log.file = false
CONF
  echo '[rabbitmq_management].' >"$dir/enabled_plugins"
  running rabbitmq-epmd || start rabbitmq-epmd -C "$STATE/rabbitmq" "$EPMD_PORT" -- epmd -port "$EPMD_PORT"
  running "$name" && return 0
  local RABBITMQ_ARGV
  rabbitmq_command "$name" rabbitmq-server
  start "$name" -C "$dir" "${RABBITMQ_AMQP_PORT[$name]}" "${RABBITMQ_MANAGEMENT_PORT[$name]}" \
    "${RABBITMQ_DIST_PORT[$name]}" -- "${RABBITMQ_ARGV[@]}"
}

# rabbitmq_ready INSTANCE: waits for its management API, and creates the operator's administrator (not
# guest) through it as guest on the node's first start.
rabbitmq_ready() {
  local name=$1 port=${RABBITMQ_MANAGEMENT_PORT[$1]}
  wait_until "$name" 120 management_answers "$name"
  # whoami asks only for the login: a 4.3 node just booted can answer 500 to overview for a moment (its
  # node statistics not gathered yet), which is waited for last.
  if ! management "$name" whoami >/dev/null; then
    curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
      "http://127.0.0.1:$port/api/users/$RABBITMQ_ADMIN_USERNAME" \
      -d "{\"password\":\"$(rabbitmq_admin_password "$name")\",\"tags\":\"administrator\"}" >/dev/null &&
      curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
        "http://127.0.0.1:$port/api/permissions/%2F/$RABBITMQ_ADMIN_USERNAME" \
        -d '{"configure":".*","write":".*","read":".*"}' >/dev/null ||
      die_with_log "$STATE/logs/$name.log" "$name: could not create the administrator $RABBITMQ_ADMIN_USERNAME"
    management "$name" whoami >/dev/null || die_with_log "$STATE/logs/$name.log" "$name: the administrator cannot log in"
  fi
  wait_until "$name" 60 management "$name" overview
}

rabbitmq_up() {
  mkdir -p "$STATE/logs"
  rabbitmq_start rabbitmq
  rabbitmq_ready rabbitmq
}

rabbitmq_version() { management "${1:-rabbitmq}" overview 2>/dev/null | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p'; }

# rabbitmq_down [INSTANCE]: stops one node, or every node (the optional one too) and then their epmd.
rabbitmq_down() {
  if [[ -n ${1:-} ]]; then
    stop "$1"
    return
  fi
  local name
  for name in "${RABBITMQ_INSTANCES[@]}" "${RABBITMQ_OPTIONAL[@]}"; do stop "$name"; done
  stop rabbitmq-epmd
}

# rabbitmq_43_env_file: env.sh (when `up` wrote it) names the optional node as RABBITMQ_43_* while it
# runs, and not after.
rabbitmq_43_env_file() {
  local f=$STATE/env.sh
  [[ -f $f ]] || return 0
  grep -v '^export RABBITMQ_43_' "$f" >"$f.tmp" || true
  if running rabbitmq-43; then rabbitmq_43_env >>"$f.tmp"; fi
  mv "$f.tmp" "$f"
}

# rabbitmq_43_env: the optional node's lines of env.sh.
rabbitmq_43_env() {
  cat <<ENV
export RABBITMQ_43_URL=amqp://$RABBITMQ_ADMIN_USERNAME:$(rabbitmq_admin_password rabbitmq-43)@127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-43]}
export RABBITMQ_43_MANAGEMENT_URL=http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-43]}
export RABBITMQ_43_ADMIN_USERNAME=$RABBITMQ_ADMIN_USERNAME
export RABBITMQ_43_ADMIN_PASSWORD=$(rabbitmq_admin_password rabbitmq-43)
export RABBITMQ_43_CTL=$STATE/rabbitmq-43/rabbitmqctl
export RABBITMQ_43_VERSION=$(rabbitmq_version rabbitmq-43)
ENV
}

# The optional second 4.3 node: `up` starts it beside a running environment and adds it to env.sh
# (write_env), `down` stops it and drops its data; the environment's `down` stops it too.
rabbitmq_43_part() {
  case $1 in
    up)
      running rabbitmq-epmd || die "rabbitmq-43: start the environment first (scripts/localenv.sh up)"
      rabbitmq_start rabbitmq-43
      rabbitmq_ready rabbitmq-43
      rabbitmq_write_ctl rabbitmq-43
      rabbitmq_43_env_file
      log "rabbitmq-43 up: amqp://127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-43]}, http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-43]}; env.sh names it RABBITMQ_43_*"
      ;;
    down)
      stop rabbitmq-43
      rm -rf "$STATE/rabbitmq-43/mnesia"
      rabbitmq_43_env_file
      log "rabbitmq-43 down"
      ;;
    status)
      if running rabbitmq-43; then
        echo "rabbitmq-43 running  pid $(pid_of rabbitmq-43)  amqp://127.0.0.1:${RABBITMQ_AMQP_PORT[rabbitmq-43]}, http://127.0.0.1:${RABBITMQ_MANAGEMENT_PORT[rabbitmq-43]}"
      else
        echo "rabbitmq-43 stopped"
        return 1
      fi
      ;;
    *) die "usage: $0 rabbitmq-43 up|down|status" ;;
  esac
}
