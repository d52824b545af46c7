#!/usr/bin/env bash
# Builds vhost-broker's OCI image without Docker, with Debian's buildah (vfs storage; nothing runs
# inside the image while it is built, so no isolation is needed). One layer holds:
#
#   - a minimal Debian root filesystem from mmdebstrap (glibc, libstdc++, CA certificates; no shell, no
#     package manager) with /etc/passwd naming the numeric user 65532;
#   - the pinned Node binary of the project's own `node` dependency, as /usr/local/bin/node;
#   - /app: package.json, the production dependencies and dist/, the build of src/ (tests left out).
#
# Each piece is cached in $VHOST_BROKER_CACHE/image keyed by the hash of what it is made of, so a second
# build with the same sources reuses everything. Prints the image reference: oci:<layout dir>:<tag>.
#
#   scripts/image.sh             build (or reuse) and print the reference
#   IMAGE_LAYOUT=dir scripts/image.sh   write the OCI layout there instead of the cache
#
# Needs root (mmdebstrap and buildah); installs buildah, mmdebstrap, umoci and runc with apt-get when
# they are missing.
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
WORK=$CACHE/image
LAYOUT=${IMAGE_LAYOUT:-$WORK/oci}
SUITE=bookworm
MIRROR=${IMAGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# What Node needs at run time, and CA certificates for https to OpenBao and brokers.
PACKAGES=libc6,libgcc-s1,libstdc++6,ca-certificates
UID_=65532

say() { echo "image: $*" >&2; }
die() {
  say "$*"
  exit 1
}
sha() { sha256sum | cut -c1-16; }

ensure_tools() {
  local missing=()
  for tool in buildah mmdebstrap umoci runc; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  ((${#missing[@]} == 0)) && return 0
  [[ $(id -u) == 0 ]] || die "needs ${missing[*]} (apt-get install buildah mmdebstrap umoci runc, as root)"
  say "installing ${missing[*]} with apt-get"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq buildah mmdebstrap umoci runc >/dev/null
}

# The root filesystem as a tar. `extract` unpacks the packages without running their maintainer scripts,
# so base_fixups does the little those scripts would have done that matters here.
base_tar() {
  local key out dir
  key=$(sha <<<"$SUITE $MIRROR $PACKAGES $UID_ $(declare -f base_fixups)")
  out=$WORK/base-$key.tar
  if [[ ! -f $out ]]; then
    say "root filesystem: mmdebstrap $SUITE with $PACKAGES"
    dir=$WORK/base-$key.tmp
    rm -rf "$dir"
    mmdebstrap --quiet --mode=root --variant=extract --include="$PACKAGES" "$SUITE" "$dir" "$MIRROR" >&2
    base_fixups "$dir"
    tar -C "$dir" -cf "$out.tmp" .
    rm -rf "$dir"
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

base_fixups() {
  local r=$1
  # update-ca-certificates' bundle, from the certificates the package ships.
  mkdir -p "$r/etc/ssl/certs"
  cat "$r"/usr/share/ca-certificates/mozilla/*.crt >"$r/etc/ssl/certs/ca-certificates.crt"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:%s:%s:nonroot:/home/nonroot:/usr/sbin/nologin\n' \
    "$UID_" "$UID_" >"$r/etc/passwd"
  printf 'root:x:0:\nnonroot:x:%s:\n' "$UID_" >"$r/etc/group"
  mkdir -p "$r/home/nonroot" "$r/tmp"
  chown "$UID_:$UID_" "$r/home/nonroot"
  chmod 1777 "$r/tmp"
  # Nothing at run time reads these; openssl and debconf come in only as dependencies of ca-certificates.
  rm -rf "$r"/usr/share/doc "$r"/usr/share/man "$r"/usr/share/info "$r"/usr/share/locale \
    "$r"/usr/share/lintian "$r"/usr/share/debconf "$r"/usr/bin/* "$r"/usr/sbin/* "$r"/var/cache/* \
    "$r"/var/lib/apt "$r"/var/lib/dpkg "$r"/etc/apt "$r"/dev/*
}

node_binary() {
  local node=$root/node_modules/node/bin/node want
  want=$(sed -n 's/^ *"node": "\([0-9.]*\)",\{0,1\}$/\1/p' "$root/package.json")
  [[ -x $node ]] || die "no $node: run npm install first"
  [[ $("$node" --version) == "v$want" ]] || die "$node is $("$node" --version), package.json pins $want"
  echo "$node"
}

# The production dependencies as the lock pins them, in a folder of its own, keyed by the lock and the
# Node version. `npm install` rather than `npm ci`, as in scripts/ensure-deps.sh: npm ci refuses the
# lock over an optional Windows-only dependency the registry does not serve.
app_deps() {
  local node=$1 key out
  key=$(cat "$root/package.json" "$root/package-lock.json" <("$node" --version) | sha)
  out=$WORK/deps-$key
  if [[ ! -d $out/node_modules ]]; then
    say "dependencies: npm install --omit=dev"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    cp "$root/package.json" "$root/package-lock.json" "$out.tmp/"
    # The pinned Node runs npm; no install script runs (the production dependencies have none).
    (cd "$out.tmp" && PATH=$(dirname "$node"):$PATH npm install --omit=dev --ignore-scripts \
      --no-audit --no-fund --loglevel=error) >&2
    # Type declarations, source maps and read-mes are never loaded at run time (a third of the size).
    find "$out.tmp/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' \
      -o -name '*.map' -o -name '*.md' \) -delete
    rm -f "$out.tmp/package-lock.json"
    mv "$out.tmp" "$out"
  fi
  echo "$out"
}

# /app as the image carries it: the dependencies, package.json and dist/, the JavaScript that
# `npm run build` writes from src/ without its tests. Run from its TypeScript sources, Node would strip
# their types as it loads them, and the stripper alone holds about 17 MiB (docs/performance.md).
app_tree() {
  local deps=$1 node=$2 out=$WORK/app.tmp
  rm -rf "$out" && mkdir -p "$out"
  cp -a "$deps/node_modules" "$deps/package.json" "$out/"
  "$node" "$root/node_modules/typescript/bin/tsc" -p "$root/tsconfig.build.json" --outDir "$out/dist" >&2
  echo "$out"
}

# The image's tag: the version and a hash of everything that goes in, this script (the config) included.
image_tag() {
  local base=$1 node=$2 deps=$3 version
  version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json")
  echo "$version-$({
    echo "$base $deps $UID_"
    sha256sum "$node"
    cd "$root" && sha256sum tsconfig.json tsconfig.build.json scripts/image.sh
    find src -type f -name '*.ts' ! -name '*.test.ts' -print0 | sort -z | xargs -0 sha256sum
  } | sha)"
}

main() {
  ensure_tools
  mkdir -p "$WORK"
  local t0=$SECONDS base node deps app tag
  base=$(base_tar)
  node=$(node_binary)
  deps=$(app_deps "$node")
  tag=$(image_tag "$base" "$node" "$deps")
  if umoci stat --image "$LAYOUT:$tag" >/dev/null 2>&1; then
    say "oci:$LAYOUT:$tag is up to date"
    echo "oci:$LAYOUT:$tag"
    return 0
  fi
  app=$(app_tree "$deps" "$node")
  local -a bah=(buildah --storage-driver vfs --root "$WORK/storage" --runroot "$WORK/run")
  local ctr
  ctr=$("${bah[@]}" from --quiet scratch)
  # shellcheck disable=SC2064 # the container's name is known now
  trap "${bah[*]} rm $ctr >/dev/null 2>&1 || true" EXIT
  "${bah[@]}" add --quiet "$ctr" "$base" /
  "${bah[@]}" copy --quiet --chown 0:0 "$ctr" "$node" /usr/local/bin/node
  "${bah[@]}" copy --quiet --chown 0:0 "$ctr" "$app" /app
  "${bah[@]}" config --user "$UID_:$UID_" --workingdir /app --env NODE_ENV=production --env MALLOC_ARENA_MAX=2 \
    --env MALLOC_MMAP_THRESHOLD_=131072 \
    --entrypoint '["/usr/local/bin/node","--max-semi-space-size=1","--memory-saver-mode","dist/main.js"]' --cmd '' \
    --label "org.opencontainers.image.title=vhost-broker" \
    --label "org.opencontainers.image.version=${tag%%-*}" "$ctr"
  "${bah[@]}" commit --quiet --format oci --disable-compression=false --rm "$ctr" "oci:$LAYOUT:$tag" >/dev/null
  trap - EXIT
  rm -rf "$app"
  # One image per layout: older builds' tags and blobs go.
  local old
  for old in $(umoci ls --layout "$LAYOUT"); do
    [[ $old == "$tag" ]] || umoci rm --image "$LAYOUT:$old"
  done
  umoci gc --layout "$LAYOUT"
  say "built oci:$LAYOUT:$tag in $((SECONDS - t0))s"
  echo "oci:$LAYOUT:$tag"
}

main "$@"
