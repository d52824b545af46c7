# libfaketime from Debian's libfaketime package (0.9.10 on Debian 12), for the chaos suite's wall-clock
# step (docs/reliability.md): an operator replica started with it in LD_PRELOAD reads its wall clock's
# offset from a file, while its monotonic clock stays the machine's. Installed with apt-get once, when
# missing; the library is all it takes (the `faketime` wrapper stays out).

LIBFAKETIME=/usr/lib/$(uname -m)-linux-gnu/faketime/libfaketime.so.1

ensure_faketime_installed() {
  [[ -f $LIBFAKETIME ]] && return 0
  [[ $(id -u) == 0 ]] || die "faketime: $LIBFAKETIME is missing and installing it needs root (apt-get install libfaketime)"
  log "installing libfaketime from Debian"
  mkdir -p "$STATE/logs"
  local status=0
  # Another apt-get on the machine holds the lock for a while at most: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=300)
  { apt-get "${wait[@]}" update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends libfaketime; } \
    >"$STATE/logs/faketime-install.log" 2>&1 || status=$?
  ((status == 0)) || die_with_log "$STATE/logs/faketime-install.log" "faketime: apt-get install libfaketime failed"
  [[ -f $LIBFAKETIME ]] || die "faketime: the libfaketime package holds no $LIBFAKETIME"
}

# `scripts/localenv.sh faketime`: installs it when missing and prints the library's path.
faketime_command() {
  ensure_faketime_installed
  echo "$LIBFAKETIME"
}
