#!/usr/bin/env bash
# Builds vhost-broker's OCI image without Docker, with Debian's buildah (vfs storage; nothing runs
# inside the image while it is built, so no isolation is needed). One layer holds:
#
#   - a minimal Debian root filesystem from mmdebstrap (glibc, libstdc++, CA certificates; no shell, no
#     package manager) with /etc/passwd naming the numeric user 65532;
#   - the pinned Node binary of the project's own `node` dependency, as /usr/local/bin/node; for another
#     architecture than the machine's, npm's `node-linux-<arch>` package of the same version;
#   - /app: package.json, the production dependencies and dist/, the build of src/ (tests left out).
#
# Each piece is cached in $VHOST_BROKER_CACHE/image keyed by the hash of what it is made of, so a second
# build with the same sources reuses everything. The source commit (`git rev-parse HEAD`) is stamped
# into the config afterwards (VHOST_BROKER_REVISION, read by src/runtime/base/build.ts, and the OCI
# labels), so a new commit rewrites the config alone. Prints the image reference:
# oci:<layout dir>:<tag>.
#
#   scripts/image.sh [ARCH]      build (or reuse) for ARCH (amd64 or arm64; the machine's by default)
#                                and print the reference
#   IMAGE_LAYOUT=dir scripts/image.sh   write the OCI layout there instead of the cache
#   IMAGE_ARCHIVE=file scripts/image.sh [ARCH]   also write the image as an OCI archive (scripts/release.sh)
#
# Nothing runs inside the root filesystem while it is built (mmdebstrap's extract variant), so arm64
# builds on an amd64 machine without qemu.
#
# Needs root (mmdebstrap and buildah); installs buildah, mmdebstrap, umoci and runc with apt-get when
# they are missing.
set -euo pipefail
shopt -s inherit_errexit

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
WORK=$CACHE/image
HOST_ARCH=$(dpkg --print-architecture)
ARCH=${1:-$HOST_ARCH}
# amd64's layout and root filesystem keep the names they had before the architecture was a parameter.
ARCH_SUFFIX=$([[ $ARCH == amd64 ]] || echo "-$ARCH")
LAYOUT=${IMAGE_LAYOUT:-$WORK/oci$ARCH_SUFFIX}
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
  out=$WORK/base-$key$ARCH_SUFFIX.tar
  if [[ ! -f $out ]]; then
    say "root filesystem: mmdebstrap $SUITE ($ARCH) with $PACKAGES"
    dir=$WORK/base-$key$ARCH_SUFFIX.tmp
    rm -rf "$dir"
    mmdebstrap --quiet --mode=root --variant=extract --architectures="$ARCH" --include="$PACKAGES" \
      "$SUITE" "$dir" "$MIRROR" >&2
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
  # shellcheck disable=SC2115 # $r is base_tar's folder, never empty (comments stay out of its cache key)
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

# The Node binary the image carries: the pinned one for the machine's architecture; for another, the
# package the `node` dependency installs on such a machine (node-linux-<arch> at the same version),
# unpacked into the cache and checked to be an ELF binary of that architecture.
image_node() {
  local node=$1 version npm_arch machine out
  [[ $ARCH == "$HOST_ARCH" ]] && echo "$node" && return 0
  version=$("$node" --version)
  version=${version#v}
  case $ARCH in
    amd64) npm_arch=x64 machine=62 ;;
    arm64) npm_arch=arm64 machine=183 ;;
  esac
  out=$WORK/node-$version-linux-$npm_arch
  if [[ ! -x $out/bin/node ]]; then
    say "node: npm pack node-linux-$npm_arch@$version"
    rm -rf "$out.tmp" && mkdir -p "$out.tmp"
    (cd "$out.tmp" && PATH=$(dirname "$node"):$PATH npm pack --silent "node-linux-$npm_arch@$version") >/dev/null
    tar -C "$out.tmp" -xzf "$out.tmp/node-linux-$npm_arch-$version.tgz" package/bin/node
    # ELF's e_machine, two bytes at offset 18: 62 is x86-64, 183 is AArch64.
    [[ $(od -An -tu2 -j18 -N2 "$out.tmp/package/bin/node" | tr -d ' ') == "$machine" ]] ||
      die "node-linux-$npm_arch@$version holds no $ARCH binary"
    mv "$out.tmp/package" "$out"
    rm -rf "$out.tmp"
  fi
  echo "$out/bin/node"
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

# The production dependencies are copied, never built, into every architecture's image: that holds while
# none ships a native addon.
check_portable() {
  local deps=$1 addon
  [[ $ARCH == "$HOST_ARCH" ]] && return 0
  addon=$(find "$deps/node_modules" -name '*.node' -print -quit)
  [[ -z $addon ]] || die "the dependencies hold a native addon, built for $HOST_ARCH only: ${addon#"$deps/"}"
}

# The source commit and where the sources live (the chart's home), stamped into the config of the image
# at $1 in place: the layer stays, so a commit that changes nothing in the image costs no build.
stamp() {
  local ref=$1 revision source
  # safe.directory: root builds from a checkout another user owns (the forge's release job).
  revision=$(git -c safe.directory="$root" -C "$root" rev-parse HEAD 2>/dev/null) || revision=unknown
  source=$(sed -n 's/^home: *//p' "$root/deploy/vhost-broker/Chart.yaml")
  umoci config --image "$ref" --no-history --config.env "VHOST_BROKER_REVISION=$revision" \
    --config.label "org.opencontainers.image.revision=$revision" \
    --config.label "org.opencontainers.image.source=$source"
  umoci gc --layout "$LAYOUT"
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

# Builds the image tagged $1 into the layout from the root filesystem $2, the Node binary $3 and the
# dependencies $4 (the machine's Node $5 compiles dist/).
build_image() {
  local tag=$1 base=$2 target_node=$3 deps=$4 node=$5 app ctr old
  app=$(app_tree "$deps" "$node")
  local -a bah=(buildah --storage-driver vfs --root "$WORK/storage" --runroot "$WORK/run")
  ctr=$("${bah[@]}" from --quiet scratch)
  # shellcheck disable=SC2064 # the container's name is known now
  trap "${bah[*]} rm $ctr >/dev/null 2>&1 || true" EXIT
  "${bah[@]}" add --quiet "$ctr" "$base" /
  "${bah[@]}" copy --quiet --chown 0:0 "$ctr" "$target_node" /usr/local/bin/node
  "${bah[@]}" copy --quiet --chown 0:0 "$ctr" "$app" /app
  "${bah[@]}" config --arch "$ARCH" --os linux --user "$UID_:$UID_" --workingdir /app \
    --env NODE_ENV=production --env MALLOC_ARENA_MAX=2 --env MALLOC_MMAP_THRESHOLD_=131072 \
    --entrypoint '["/usr/local/bin/node","--max-semi-space-size=1","--memory-saver-mode","dist/main.js"]' --cmd '' \
    --label "org.opencontainers.image.title=vhost-broker" \
    --label "org.opencontainers.image.version=${tag%-*}" "$ctr"
  "${bah[@]}" commit --quiet --format oci --disable-compression=false --rm "$ctr" "oci:$LAYOUT:$tag" >/dev/null
  trap - EXIT
  rm -rf "$app"
  # One image per layout: older builds' tags and blobs go (stamp collects them).
  for old in $(umoci ls --layout "$LAYOUT"); do
    [[ $old == "$tag" ]] || umoci rm --image "$LAYOUT:$old"
  done
}

# The image tagged $1 as an OCI archive at $IMAGE_ARCHIVE: a layout holding that image alone, tagged
# with the version, in a tar whose bytes depend on the image only (sorted, no times, no owners).
write_archive() {
  local tag=$1 dir
  dir=$(mktemp -d "$WORK/archive.XXXXXX")
  # Blobs never change once written, so the copy links them.
  mkdir -p "$dir/blobs"
  cp "$LAYOUT/oci-layout" "$LAYOUT/index.json" "$dir/"
  cp -rl "$LAYOUT/blobs/sha256" "$dir/blobs/"
  umoci tag --image "$dir:$tag" "${tag%-*}"
  umoci rm --image "$dir:$tag"
  umoci gc --layout "$dir"
  tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=a+rX -C "$dir" \
    -cf "$IMAGE_ARCHIVE.tmp" oci-layout index.json blobs
  mv "$IMAGE_ARCHIVE.tmp" "$IMAGE_ARCHIVE"
  rm -rf "$dir"
}

main() {
  [[ $ARCH == amd64 || $ARCH == arm64 ]] || die "unknown architecture $ARCH (amd64 or arm64)"
  ensure_tools
  mkdir -p "$WORK"
  # One build at a time: tests and the release script share the cache.
  local lock
  exec {lock}>"$WORK/lock"
  flock "$lock"
  local t0=$SECONDS base node target_node deps tag
  base=$(base_tar)
  node=$(node_binary)
  target_node=$(image_node "$node")
  deps=$(app_deps "$node")
  check_portable "$deps"
  tag=$(image_tag "$base" "$target_node" "$deps")
  if umoci stat --image "$LAYOUT:$tag" >/dev/null 2>&1; then
    say "oci:$LAYOUT:$tag is up to date"
  else
    build_image "$tag" "$base" "$target_node" "$deps" "$node"
    say "built oci:$LAYOUT:$tag in $((SECONDS - t0))s"
  fi
  stamp "$LAYOUT:$tag"
  if [[ -n ${IMAGE_ARCHIVE:-} ]]; then
    write_archive "$tag"
    say "wrote $IMAGE_ARCHIVE"
  fi
  echo "oci:$LAYOUT:$tag"
}

main "$@"
