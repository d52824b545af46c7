# RabbitMQ from Debian's package with the management plugin, run as its own node on loopback with all
# of its state under $STATE/rabbitmq. Its own epmd on a private port keeps it apart from any other
# Erlang node on the machine, and lets `down` stop it by pid.

AMQP_PORT=${LOCALENV_AMQP_PORT:-25680}
MANAGEMENT_PORT=${LOCALENV_RABBITMQ_MANAGEMENT_PORT:-25681}
DIST_PORT=${LOCALENV_RABBITMQ_DIST_PORT:-25682}
EPMD_PORT=${LOCALENV_EPMD_PORT:-25683}
RABBITMQ_ADMIN_USERNAME=vhost-broker-admin

rabbitmq_env() {
  local dir=$STATE/rabbitmq
  export HOME=$dir/home ERL_EPMD_PORT=$EPMD_PORT \
    RABBITMQ_NODENAME=localenv@localhost RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf \
    RABBITMQ_CONFIG_FILE=$dir/rabbitmq.conf RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins \
    RABBITMQ_MNESIA_BASE=$dir/mnesia RABBITMQ_LOG_BASE=$dir/log RABBITMQ_DIST_PORT=$DIST_PORT \
    RABBITMQ_PID_FILE=$dir/rabbitmq.pid ERL_CRASH_DUMP=$dir/log/erl_crash.dump
}

ensure_rabbitmq_installed() {
  [[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]] && return 0
  log "installing rabbitmq-server from Debian"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq rabbitmq-server; } \
    >"$STATE/logs/rabbitmq-install.log" 2>&1 ||
    die_with_log "$STATE/logs/rabbitmq-install.log" "rabbitmq: apt-get install rabbitmq-server failed"
}

management() {
  curl -sf -u "$RABBITMQ_ADMIN_USERNAME:$(cat "$STATE/rabbitmq/admin-password")" \
    "http://127.0.0.1:$MANAGEMENT_PORT/api/$1" "${@:2}"
}

# The management API answers (a 401 counts: tests may delete guest, as the operator can be told to).
management_answers() {
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$MANAGEMENT_PORT/api/overview")
  [[ $code == 200 || $code == 401 ]]
}

rabbitmq_up() {
  mkdir -p "$STATE/logs"
  ensure_rabbitmq_installed
  local dir=$STATE/rabbitmq
  mkdir -p "$dir/home" "$dir/mnesia" "$dir/log"
  [[ -f $dir/admin-password ]] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$dir/admin-password"
  : >"$dir/rabbitmq-env.conf"
  cat >"$dir/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$AMQP_PORT
management.tcp.ip = 127.0.0.1
management.tcp.port = $MANAGEMENT_PORT
log.console = true
log.file = false
CONF
  echo '[rabbitmq_management].' >"$dir/enabled_plugins"
  rabbitmq_env
  running rabbitmq-epmd || start rabbitmq-epmd -C "$dir" "$EPMD_PORT" -- epmd -port "$EPMD_PORT"
  running rabbitmq || start rabbitmq -C "$dir" "$AMQP_PORT" "$MANAGEMENT_PORT" "$DIST_PORT" -- /usr/lib/rabbitmq/bin/rabbitmq-server
  wait_until rabbitmq 120 management_answers
  management overview >/dev/null && return 0
  # The operator's administrator (not guest), created through the management API as guest on the
  # broker's first start.
  curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
    "http://127.0.0.1:$MANAGEMENT_PORT/api/users/$RABBITMQ_ADMIN_USERNAME" \
    -d "{\"password\":\"$(cat "$dir/admin-password")\",\"tags\":\"administrator\"}" >/dev/null &&
    curl -sf -u guest:guest -X PUT -H 'content-type: application/json' \
      "http://127.0.0.1:$MANAGEMENT_PORT/api/permissions/%2F/$RABBITMQ_ADMIN_USERNAME" \
      -d '{"configure":".*","write":".*","read":".*"}' >/dev/null ||
    die_with_log "$STATE/logs/rabbitmq.log" "rabbitmq: could not create the administrator $RABBITMQ_ADMIN_USERNAME"
  management overview >/dev/null || die_with_log "$STATE/logs/rabbitmq.log" "rabbitmq: the administrator cannot log in"
}

rabbitmq_version() { management overview 2>/dev/null | sed -n 's/.*"rabbitmq_version":"\([^"]*\)".*/\1/p'; }

rabbitmq_down() {
  stop rabbitmq
  stop rabbitmq-epmd
}
