#!/usr/bin/env bash
# The main job: the local environment, ready to use. It stays up until you run
# `scripts/localenv.sh down`.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/ensure-deps.sh"
cd "$root"
bash scripts/localenv.sh up
cat <<MSG

The local environment runs. Reach it with:
  . .localenv/env.sh
  \$KUBECTL get namespaces                      # management cluster
  \$KUBECTL --kubeconfig \$TARGET_KUBECONFIG get ns # target cluster
  curl -u "\$RABBITMQ_ADMIN_USERNAME:\$RABBITMQ_ADMIN_PASSWORD" \$RABBITMQ_MANAGEMENT_URL/api/overview
Stop it with: scripts/localenv.sh down
MSG
