# promtool from Debian's prometheus package (2.42 on Debian 12), for the alert tests' `promtool test
# rules`. Installed with apt-get once, when missing; the package's own Prometheus service is never
# started: the install runs under a policy-rc.d that denies every service start (one already in place
# is left as it is). Recommended packages (the node exporter) stay out.

PROMTOOL=/usr/bin/promtool

ensure_promtool_installed() {
  [[ -x $PROMTOOL ]] && return 0
  log "installing promtool (prometheus) from Debian"
  mkdir -p "$STATE/logs"
  local policy=/usr/sbin/policy-rc.d ours=0 status=0
  if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\n# Written by vhost-broker localenv for the length of one apt-get install.\nexit 101\n' >"$policy"
    chmod +x "$policy"
    ours=1
  fi
  # Another apt-get on the machine holds the lock for a while at most: wait for it rather than fail.
  local wait=(-o DPkg::Lock::Timeout=300)
  { apt-get "${wait[@]}" update -qq &&
    DEBIAN_FRONTEND=noninteractive apt-get "${wait[@]}" install -y -qq --no-install-recommends prometheus; } \
    >"$STATE/logs/promtool-install.log" 2>&1 || status=$?
  ((ours)) && rm -f "$policy"
  ((status == 0)) || die_with_log "$STATE/logs/promtool-install.log" "promtool: apt-get install prometheus failed"
  [[ -x $PROMTOOL ]] || die "promtool: the prometheus package holds no $PROMTOOL"
}

# `scripts/localenv.sh promtool`: installs it when missing and prints its path.
promtool_command() {
  ensure_promtool_installed
  echo "$PROMTOOL"
}
