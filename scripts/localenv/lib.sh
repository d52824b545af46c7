# Process and port helpers shared by the parts of the local environment. Every process `up` starts
# gets a pid file under $STATE/pids; `down` stops exactly those pids and nothing else.

die() {
  echo "localenv: $*" >&2
  exit 1
}

log() { echo "localenv: $*" >&2; }

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The kernel hands ports of this range to outgoing connections (the apiservers' to etcd, for one), so a
# server port inside it can be taken by a client socket at any moment, which no listen check sees: the
# server then dies on start-up with eaddrinuse. Every port of the environment lies below it.
port_is_ephemeral() {
  local low high
  read -r low high </proc/sys/net/ipv4/ip_local_port_range || return 1
  (($1 >= low && $1 <= high))
}

# die_with_log FILE MESSAGE: dies with the end of FILE on stderr too, so that a failure explains
# itself where the file is gone afterwards (a CI run on a clean clone).
die_with_log() {
  local f=$1
  shift
  if [[ -s $f ]]; then
    echo "localenv: the last lines of $f:" >&2
    tail -n 40 "$f" | sed 's/^/  | /' >&2
  fi
  die "$*; see $f"
}

pid_of() {
  local f=$STATE/pids/$1.pid
  [[ -f $f ]] && cat "$f"
}

running() {
  local pid
  pid=$(pid_of "$1") || return 1
  [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

# start NAME [-C DIR] PORT... -- CMD...: refuses a busy port, then starts CMD in its own session, in
# DIR (default $STATE), with its output in $STATE/logs/NAME.log, and records its pid. A part never
# keeps its starter's working directory: a test that restarts it runs in a checkout that may be
# deleted later, and a broker whose directory is gone cannot spawn a process any more.
start() {
  local name=$1 dir=$STATE
  shift
  if [[ $1 == -C ]]; then
    dir=$2
    shift 2
  fi
  local ports=()
  while [[ $1 != -- ]]; do
    ports+=("$1")
    shift
  done
  shift
  local p
  for p in "${ports[@]}"; do
    port_is_ephemeral "$p" &&
      die "$name: port $p lies in the kernel's ephemeral port range ($(tr '\t' - </proc/sys/net/ipv4/ip_local_port_range)), where outgoing connections can take it; set its LOCALENV_*_PORT below that range"
    port_in_use "$p" && die "$name: port $p on 127.0.0.1 is already in use (set its LOCALENV_*_PORT or free it)"
  done
  mkdir -p "$STATE/pids" "$STATE/logs" "$dir"
  (cd "$dir" && exec setsid "$@" >"$STATE/logs/$name.log" 2>&1 </dev/null) &
  echo $! >"$STATE/pids/$name.pid"
}

# wait_until NAME SECONDS CMD...: polls CMD until it succeeds; a process that died or a timeout stops
# `up` naming the part and its log.
wait_until() {
  local name=$1 secs=$2
  shift 2
  local deadline=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    running "$name" || die_with_log "$STATE/logs/$name.log" "$name exited during start-up"
    ((SECONDS < deadline)) || die_with_log "$STATE/logs/$name.log" "$name did not become ready within ${secs}s"
    sleep 0.5
  done
}

stop() {
  local name=$1 pid
  pid=$(pid_of "$name") || return 0
  if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    local i
    for i in $(seq 1 60); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$STATE/pids/$name.pid"
}
