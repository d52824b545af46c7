# OpenStack's client libraries in a Python virtual environment of the cache (oslo-venv.sh), for the
# tests that read what the operator delivers as an OpenStack service does. `up` starts its build in
# the background and waits for it at its end; env.sh exports its python as OSLO_PYTHON.

oslo_venv_prebuild() {
  OSLO_PYTHON=$(oslo_venv_python)
  [[ -f $(dirname "$(dirname "$OSLO_PYTHON")")/.built ]] && return 0
  running oslo-venv-build && return 0
  start oslo-venv-build -C "$STATE" -- env VHOST_BROKER_CACHE="$CACHE" bash "$HERE/oslo-venv.sh"
}

oslo_venv_python() {
  echo "$CACHE/python/oslo-$(sha256sum "$HERE/oslo-requirements.txt" | cut -c1-16)/bin/python"
}

ensure_oslo_venv() {
  OSLO_PYTHON=$(oslo_venv_python)
  while running oslo-venv-build; do sleep 1; done
  [[ -f $(dirname "$(dirname "$OSLO_PYTHON")")/.built ]] && return 0
  log "oslo: building the Python virtual environment (log: $STATE/logs/oslo-venv.log)"
  VHOST_BROKER_CACHE=$CACHE bash "$HERE/oslo-venv.sh" >"$STATE/logs/oslo-venv.log" 2>&1 ||
    die_with_log "$STATE/logs/oslo-venv.log" "oslo: the Python virtual environment did not build"
}
