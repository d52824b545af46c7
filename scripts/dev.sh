#!/usr/bin/env bash
# The main job: the local environment, the example order of the specification, and the operator
# with its built-in topology controller in the foreground. Ctrl-C stops the operator; the
# environment stays up until `scripts/localenv.sh down`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/ensure-deps.sh"
cd "$root"
bash scripts/localenv.sh up
source .localenv/env.sh
cat >&2 <<MSG

In another shell, watch the order and connect with what it delivers:
  . .localenv/env.sh
  \$KUBECTL get rabbitmqvhosts -A -w
  \$KUBECTL -n tenant-a get secret workflow-credentials -o jsonpath='{.data.transport_url}' | base64 -d

MSG
exec node scripts/demo/main.ts
