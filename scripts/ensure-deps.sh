# Installs the npm dependencies (with the pinned Node 24) when they are missing or older than the lock.
# Sourced by the entry scripts so that a fresh clone needs no step before `npm start` or `npm test`.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ! -x $root/node_modules/.bin/node || $root/package-lock.json -nt $root/node_modules/.package-lock.json ]]; then
  (cd "$root" && npm ci --no-audit --no-fund) || {
    echo "npm ci failed" >&2
    exit 1
  }
fi
export PATH=$root/node_modules/.bin:$PATH
