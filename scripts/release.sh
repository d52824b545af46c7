#!/usr/bin/env bash
# Writes vhost-broker's release artifacts into $RELEASE_DIR (dist/release/ by default):
#
#   vhost-broker-<version>.tgz, target-cluster-access-<version>.tgz   the charts, from `helm package`
#   vhost-broker-<version>-linux-<arch>.oci.tar   the image, one per architecture of $RELEASE_ARCHES
#       ("amd64 arm64" by default), built by scripts/image.sh: an OCI archive (a tar of an OCI layout)
#       whose one image is tagged <version>
#   SHA256SUMS   `sha256sum --check SHA256SUMS` verifies them
#
# .github/workflows/release.yml runs it and publishes what it writes; test/release/release.itest.ts runs
# it on the local machine. Needs root, as scripts/image.sh does, and helm ($HELM, else helm on PATH,
# else the local environment's from .localenv/env.sh).
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${RELEASE_DIR:-$root/dist/release}
ARCHES=${RELEASE_ARCHES:-amd64 arm64}
CHARTS=(vhost-broker target-cluster-access)

say() { echo "release: $*" >&2; }
die() {
  say "$*"
  exit 1
}

helm_binary() {
  local env=${LOCALENV_STATE:-$root/.localenv}/env.sh from_env
  if [[ -n ${HELM:-} ]]; then
    echo "$HELM"
  elif command -v helm; then
    :
  elif [[ -f $env ]] && from_env=$(sed -n 's/^export HELM=//p' "$env") && [[ -x $from_env ]]; then
    echo "$from_env"
  else
    die "no helm: set HELM, put helm on PATH, or run scripts/localenv.sh up"
  fi
}

# The charts and the image carry package.json's version; a release where they disagree is refused.
check_versions() {
  local version=$1 chart field value
  for chart in "${CHARTS[@]}"; do
    for field in version appVersion; do
      value=$(sed -n "s/^$field: *\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$root/deploy/$chart/Chart.yaml")
      [[ $value == "$version" ]] ||
        die "deploy/$chart/Chart.yaml has $field ${value:-(none)}, package.json has version $version"
    done
  done
}

main() {
  local t0=$SECONDS version helm chart arch
  version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")
  check_versions "$version"
  helm=$(helm_binary)
  mkdir -p "$OUT"
  # Only what an earlier run wrote goes: RELEASE_DIR may hold other files.
  rm -f "$OUT"/*.tgz "$OUT"/*.oci.tar "$OUT/SHA256SUMS"
  for chart in "${CHARTS[@]}"; do
    "$helm" package "$root/deploy/$chart" --destination "$OUT" >/dev/null
  done
  for arch in $ARCHES; do
    IMAGE_ARCHIVE=$OUT/vhost-broker-$version-linux-$arch.oci.tar bash "$root/scripts/image.sh" "$arch" >/dev/null ||
      die "the $arch image: scripts/image.sh $arch failed (its message is above)"
  done
  (cd "$OUT" && sha256sum -- *.tgz *.oci.tar >SHA256SUMS)
  say "wrote $OUT in $((SECONDS - t0))s:"
  (cd "$OUT" && ls -l -- *.tgz *.oci.tar SHA256SUMS) >&2
}

main "$@"
