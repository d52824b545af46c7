# RabbitMQ from Debian's package with the management plugin, run as nodes on loopback, each with its
# own ports, node name and state under $STATE/<instance>. Two instances: `rabbitmq`, the broker every
# test uses, and `rabbitmq-2`, a second broker for the tests and benchmark phases that need two (a lane
# per broker). Both register with one epmd of their own on a private port, which keeps them apart from
# any other Erlang node on the machine and lets `down` stop it by pid.

RABBITMQ_INSTANCES=(rabbitmq rabbitmq-2)
declare -A RABBITMQ_AMQP_PORT=([rabbitmq]=${LOCALENV_AMQP_PORT:-25680} [rabbitmq-2]=${LOCALENV_AMQP_2_PORT:-25684})
declare -A RABBITMQ_MANAGEMENT_PORT=([rabbitmq]=${LOCALENV_RABBITMQ_MANAGEMENT_PORT:-25681}
  [rabbitmq-2]=${LOCALENV_RABBITMQ_2_MANAGEMENT_PORT:-25685})
declare -A RABBITMQ_DIST_PORT=([rabbitmq]=${LOCALENV_RABBITMQ_DIST_PORT:-25682}
  [rabbitmq-2]=${LOCALENV_RABBITMQ_2_DIST_PORT:-25686})
declare -A RABBITMQ_NODE=([rabbitmq]=localenv@localhost [rabbitmq-2]=localenv2@localhost)
AMQP_PORT=${RABBITMQ_AMQP_PORT[rabbitmq]}
MANAGEMENT_PORT=${RABBITMQ_MANAGEMENT_PORT[rabbitmq]}
EPMD_PORT=${LOCALENV_EPMD_PORT:-25683}
RABBITMQ_ADMIN_USERNAME=vhost-broker-admin

# rabbitmq_env INSTANCE: the node's environment, exported (for its start and for rabbitmqctl).
rabbitmq_env() {
  local dir=$STATE/$1
  export HOME=$dir/home ERL_EPMD_PORT=$EPMD_PORT \
    RABBITMQ_NODENAME=${RABBITMQ_NODE[$1]} RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf \
    RABBITMQ_CONFIG_FILE=$dir/rabbitmq.conf RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins \
    RABBITMQ_MNESIA_BASE=$dir/mnesia RABBITMQ_LOG_BASE=$dir/log RABBITMQ_DIST_PORT=${RABBITMQ_DIST_PORT[$1]} \
    RABBITMQ_PID_FILE=$dir/rabbitmq.pid ERL_CRASH_DUMP=$dir/log/erl_crash.dump
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
  local name=$1 dir=$STATE/$1
  mkdir -p "$STATE/logs" "$dir/home" "$dir/mnesia" "$dir/log"
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
  # In a subshell: the node's environment is its own, not the script's.
  (
    rabbitmq_env "$name"
    start "$name" -C "$dir" "${RABBITMQ_AMQP_PORT[$name]}" "${RABBITMQ_MANAGEMENT_PORT[$name]}" \
      "${RABBITMQ_DIST_PORT[$name]}" -- /usr/lib/rabbitmq/bin/rabbitmq-server
  )
}

# rabbitmq_ready INSTANCE: waits for its management API, and creates the operator's administrator (not
# guest) through it as guest on the node's first start.
rabbitmq_ready() {
  local name=$1 port=${RABBITMQ_MANAGEMENT_PORT[$1]}
  wait_until "$name" 120 management_answers "$name"
  management "$name" overview >/dev/null && return 0
  curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
    "http://127.0.0.1:$port/api/users/$RABBITMQ_ADMIN_USERNAME" \
    -d "{\"password\":\"$(rabbitmq_admin_password "$name")\",\"tags\":\"administrator\"}" >/dev/null &&
    curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
      "http://127.0.0.1:$port/api/permissions/%2F/$RABBITMQ_ADMIN_USERNAME" \
      -d '{"configure":".*","write":".*","read":".*"}' >/dev/null ||
    die_with_log "$STATE/logs/$name.log" "$name: could not create the administrator $RABBITMQ_ADMIN_USERNAME"
  management "$name" overview >/dev/null || die_with_log "$STATE/logs/$name.log" "$name: the administrator cannot log in"
}

rabbitmq_up() {
  mkdir -p "$STATE/logs"
  ensure_rabbitmq_installed
  rabbitmq_start rabbitmq
  rabbitmq_ready rabbitmq
}

rabbitmq_version() { management rabbitmq overview 2>/dev/null | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p'; }

# rabbitmq_down [INSTANCE]: stops one node, or every node and then their epmd.
rabbitmq_down() {
  if [[ -n ${1:-} ]]; then
    stop "$1"
    return
  fi
  local name
  for name in "${RABBITMQ_INSTANCES[@]}"; do stop "$name"; done
  stop rabbitmq-epmd
}
