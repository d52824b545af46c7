#!/usr/bin/env bash
# The whole test suite: lint, typecheck, unit tests, then integration tests against the local
# environment (brought up for the run unless one already runs, and stopped again if this run started it).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/ensure-deps.sh"
cd "$root"
eslint .
prettier --check . >/dev/null || { prettier --check . ; exit 1; }
tsc --noEmit
vitest run --project unit
vitest run --project integration
