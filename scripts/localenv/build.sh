#!/usr/bin/env bash
# Builds the Kubernetes and etcd binaries the local environment runs, from the Go module proxy, into a
# cache outside the repository keyed by version. A version already built is reused.
#
#   build.sh k8s <version>   -> $CACHE/kubernetes/<version>/{kube-apiserver,kube-controller-manager,kubectl}
#   build.sh node <version>  -> $CACHE/kubernetes/<version>/{kubelet,kube-scheduler}
#   build.sh etcd <version>  -> $CACHE/etcd/<version>/etcd
#   build.sh helm <version>  -> $CACHE/helm/<version>/helm
#   build.sh topology-operator <version>
#                            -> $CACHE/topology-operator/<version>/{messaging-topology-operator,crds/}
set -euo pipefail

CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
kind=$1 version=$2

# k8s_module WORK CMD...: a Go module in WORK that requires k8s.io/kubernetes at $version and imports the
# given commands, ready for `go build k8s.io/kubernetes/cmd/CMD`.
k8s_module() {
  local work=$1
  shift
  rm -rf "$work" && mkdir -p "$work"
  cd "$work"
  go mod init localenv/kubernetes >/dev/null 2>&1
  # k8s.io/kubernetes replaces its staging modules with local folders; the module proxy serves them
  # as published v0.Y.Z modules instead, so the replace block of the tag's own go.mod is rewritten.
  local gomod
  gomod=$(go mod download -json "k8s.io/kubernetes@$version" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')
  local staging="v0.${version#v1.}"
  {
    echo "require k8s.io/kubernetes $version"
    echo "replace ("
    sed -n '/^replace (/,/^)/p' "$gomod" | sed -n 's#^\t\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging"'#p'
    echo ")"
  } >>go.mod
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    local cmd
    for cmd in "$@"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"; done
    printf ')\n'
  } >tools.go
  go mod tidy -e >/dev/null 2>&1 || true
  go get "k8s.io/kubernetes@$version"
}

# k8s_build OUT CMD...: builds each command into OUT with an honest /version.
k8s_build() {
  local out=$1 cmd
  shift
  mkdir -p "$out"
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$version -X k8s.io/client-go/pkg/version.gitVersion=$version"
  for cmd in "$@"; do
    go build -trimpath -ldflags "$ldflags" -o "$out/$cmd.tmp" "k8s.io/kubernetes/cmd/$cmd"
    mv "$out/$cmd.tmp" "$out/$cmd"
  done
}

build_k8s() {
  local out=$CACHE/kubernetes/$version
  if [[ -x $out/kube-apiserver && -x $out/kube-controller-manager && -x $out/kubectl ]]; then return 0; fi
  k8s_module "$CACHE/build/kubernetes-$version" kube-apiserver kube-controller-manager kubectl
  k8s_build "$out" kube-apiserver kube-controller-manager kubectl
}

# The node's parts (scripts/localenv/node.sh), in a module of their own so that the control plane's
# build is never redone for them; most packages come from the Go build cache the control plane filled.
build_node() {
  local out=$CACHE/kubernetes/$version
  if [[ -x $out/kubelet && -x $out/kube-scheduler ]]; then return 0; fi
  k8s_module "$CACHE/build/kubernetes-node-$version" kubelet kube-scheduler
  k8s_build "$out" kubelet kube-scheduler
}

build_etcd() {
  local out=$CACHE/etcd/$version
  if [[ -x $out/etcd ]]; then return 0; fi
  local work=$CACHE/build/etcd-$version
  rm -rf "$work" && mkdir -p "$work" "$out"
  cd "$work"
  go mod init localenv/etcd >/dev/null 2>&1
  cat >main.go <<'GO'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  go get "go.etcd.io/etcd/server/v3@$version"
  go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$out/etcd.tmp" .
  mv "$out/etcd.tmp" "$out/etcd"
}

build_helm() {
  local out=$CACHE/helm/$version
  if [[ -x $out/helm ]]; then return 0; fi
  mkdir -p "$out"
  GOBIN=$out go install -trimpath -ldflags "-s -w" "helm.sh/helm/v3/cmd/helm@$version"
}

# The upstream RabbitMQ Messaging Topology Operator, for the tests that run it as the topology backend.
# `go install module/cmd@version` fails (the proxy refuses the module's version list), so the exact
# version is downloaded and built inside a writable copy of it.
build_topology_operator() {
  local out=$CACHE/topology-operator/$version
  if [[ -x $out/messaging-topology-operator && -d $out/crds ]]; then return 0; fi
  local module=github.com/rabbitmq/messaging-topology-operator
  local dir
  dir=$(go mod download -json "$module@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
  [[ -n $dir ]] || { echo "no module directory for $module@$version" >&2; return 1; }
  local work=$CACHE/build/topology-operator-$version
  rm -rf "$work" "$out" && mkdir -p "$(dirname "$work")" "$out"
  cp -r "$dir" "$work" && chmod -R u+w "$work"
  cd "$work"
  # v1.20.1 requires github.com/rabbitmq/cluster-operator/v2 v2.22.3, which the proxy does not serve;
  # v2.22.1 has the same API types.
  if grep -q 'rabbitmq/cluster-operator/v2 v2.22.3' go.mod; then
    go mod edit -replace github.com/rabbitmq/cluster-operator/v2=github.com/rabbitmq/cluster-operator/v2@v2.22.1
  fi
  GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/messaging-topology-operator.tmp" ./cmd
  mkdir -p "$out/crds.tmp"
  cp config/crd/bases/*.yaml "$out/crds.tmp/"
  mv "$out/crds.tmp" "$out/crds"
  mv "$out/messaging-topology-operator.tmp" "$out/messaging-topology-operator"
}

case $kind in
  k8s) build_k8s ;;
  node) build_node ;;
  etcd) build_etcd ;;
  helm) build_helm ;;
  topology-operator) build_topology_operator ;;
  *) echo "usage: build.sh k8s|node|etcd|helm|topology-operator <version>" >&2; exit 2 ;;
esac
