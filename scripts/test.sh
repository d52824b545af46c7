#!/usr/bin/env bash
# The whole test suite: lint, typecheck, unit tests, then integration tests against the local
# environment (brought up for the run unless one already runs, and stopped again if this run started
# it). Ends with one line `N passed, N failed` over both test projects.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/ensure-deps.sh"
cd "$root"
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
eslint .
prettier --check . >/dev/null || { prettier --check . ; exit 1; }
tsc --noEmit
status=0
vitest run --project unit --reporter=default --reporter=json --outputFile="$results/unit.json" || status=$?
if [[ $status == 0 ]]; then
  vitest run --project integration --reporter=default --reporter=json --outputFile="$results/integration.json" || status=$?
fi
node -e '
  let passed = 0, failed = 0;
  for (const file of process.argv.slice(1)) {
    try {
      const r = JSON.parse(require("fs").readFileSync(file, "utf8"));
      passed += r.numPassedTests; failed += r.numFailedTests;
      // A file that failed outside any test (a hook, an import) counts as one failure.
      failed += r.testResults.filter((f) => f.status === "failed" && f.assertionResults.every((a) => a.status !== "failed")).length;
    } catch { /* a project that did not run */ }
  }
  console.log(`${passed} passed, ${failed} failed`);
' "$results/unit.json" "$results/integration.json"
exit $status
