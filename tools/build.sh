#!/usr/bin/env bash
# Builds one of the Go tools in tools/ (kstatus, argocd-health) from the Go module proxy into the cache
# the local environment uses, keyed by the hash of the tool's sources, and prints the binary's path. A
# build already in the cache is reused; two callers at once build it once (a lock directory).
#
#   tools/build.sh kstatus   -> $CACHE/tools/kstatus-<hash>/kstatus
set -euo pipefail

CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
name=${1:?usage: tools/build.sh kstatus|argocd-health}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/$name" 2>/dev/null && pwd) || { echo "no tool tools/$name" >&2; exit 2; }
hash=$(cd "$src" && cat go.mod go.sum ./*.go | sha256sum | cut -c1-16)
out=$CACHE/tools/$name-$hash
if [[ -x $out/$name ]]; then echo "$out/$name"; exit 0; fi

mkdir -p "$CACHE/tools"
lock=$CACHE/tools/$name-$hash.lock
for ((i = 0; ; i++)); do
  if mkdir "$lock" 2>/dev/null; then break; fi
  # A lock older than 10 minutes is left by a build that was killed.
  if [[ -n $(find "$lock" -maxdepth 0 -mmin +10 2>/dev/null) ]]; then rm -rf "$lock"; continue; fi
  ((i < 600)) || { echo "tools/$name: waited 10 minutes for another build ($lock)" >&2; exit 1; }
  sleep 1
done
trap 'rm -rf "$lock"' EXIT
if [[ ! -x $out/$name ]]; then
  mkdir -p "$out"
  log=$CACHE/tools/$name-$hash.log
  (cd "$src" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/$name.tmp" .) >"$log" 2>&1 || {
    echo "tools/$name did not build (log $log):" >&2
    tail -20 "$log" >&2
    exit 1
  }
  mv "$out/$name.tmp" "$out/$name"
fi
echo "$out/$name"
