# Installs the npm dependencies (with the pinned Node 24) when they are missing or older than the lock.
# Sourced by the entry scripts so that a fresh clone needs no step before `npm start` or `npm test`.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ! -x $root/node_modules/.bin/node || $root/package-lock.json -nt $root/node_modules/.package-lock.json ]]; then
  # `npm install` rather than `npm ci`: npm ci refuses the lock because of an optional dependency of
  # vite for Windows that the registry does not serve; install follows the lock all the same. The
  # machine's own Node runs npm, so engine warnings about Node 24 are expected and silenced.
  (cd "$root" && npm install --no-audit --no-fund --loglevel=error) || {
    echo "npm install failed" >&2
    exit 1
  }
fi
export PATH=$root/node_modules/.bin:$PATH
