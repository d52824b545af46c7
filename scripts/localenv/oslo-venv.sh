#!/usr/bin/env bash
# Builds the Python virtual environment with OpenStack's client libraries (oslo-requirements.txt, every
# package pinned) into the cache, keyed by the requirements file's hash, and prints its python:
#
#   oslo-venv.sh   -> $CACHE/python/oslo-<hash>/bin/python
#
# A venv records its own path, so it is built where it lives; `.built` marks one that is complete.
set -euo pipefail

CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
requirements=$here/oslo-requirements.txt
out=$CACHE/python/oslo-$(sha256sum "$requirements" | cut -c1-16)

if [[ ! -f $out/.built ]]; then
  rm -rf "$out" && mkdir -p "$(dirname "$out")"
  python3 -m venv "$out"
  "$out/bin/pip" install --quiet --disable-pip-version-check -r "$requirements"
  "$out/bin/python" -W ignore -c 'import oslo_messaging, oslo_db, oslo_config, sqlalchemy, pymysql'
  touch "$out/.built"
fi
echo "$out/bin/python"
