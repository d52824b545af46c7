#!/usr/bin/env bash
# Builds a root filesystem of a newer Debian suite with RabbitMQ installed from that suite's own
# packages, into the cache, for the brokers the machine's Debian does not carry (its own is 3.10):
#
#   debian-root.sh trixie   -> $CACHE/debian-root/trixie   rabbitmq-server 4.0 (Debian 13)
#   debian-root.sh sid      -> $CACHE/debian-root/sid      rabbitmq-server 4.3 (Debian unstable)
#
# sid is trixie's root filesystem copied and upgraded, so building both costs one debootstrap. A root
# filesystem is complete when its `.built` file names the broker's version; an interrupted build is
# started again from scratch.
#
# Every command that runs the suite's maintainer scripts runs in a pid namespace of its own with its own
# /proc: with the host's /proc they see the host's processes, and an erlang-base upgrade then runs
# `epmd -kill` against whatever epmd the machine runs (another local environment's broker loses its
# epmd). Nothing here touches the host's apt state or starts a service.
set -euo pipefail

CACHE=${VHOST_BROKER_CACHE:-$HOME/.cache/vhost-broker}
MIRROR=${LOCALENV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
suite=$1
work=$CACHE/build/debian-root
log() { echo "debian-root: $*" >&2; }

built() { [[ -s $1/.built ]]; }

# in_root ROOT CMD...: CMD inside ROOT, in a pid and mount namespace of its own with a /proc of its own.
in_root() {
  local root=$1
  shift
  unshare --pid --fork --mount --mount-proc="$root/proc" \
    chroot "$root" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 "$@"
}

# debootstrap itself, unpacked from Debian 12's package with a private apt state (nothing installed).
fetch_debootstrap() {
  local dir=$work/debootstrap
  [[ -x $dir/usr/sbin/debootstrap ]] && return 0
  rm -rf "$dir" "$work/apt" && mkdir -p "$dir" "$work/apt/lists/partial" "$work/apt/cache/archives/partial"
  local apt=(-o Dir::State::Lists="$work/apt/lists" -o Dir::Cache="$work/apt/cache"
    -o Dir::State::status=/var/lib/dpkg/status)
  apt-get "${apt[@]}" update -qq
  (cd "$work" && apt-get "${apt[@]}" download debootstrap)
  dpkg-deb -x "$work"/debootstrap_*.deb "$dir"
  rm -f "$work"/debootstrap_*.deb
}

# apt_install ROOT [APT OPTIONS...]: installs rabbitmq-server in ROOT, no service started.
apt_install() {
  local root=$1
  shift
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod +x "$root/usr/sbin/policy-rc.d"
  in_root "$root" apt-get "$@" update -qq
  in_root "$root" apt-get "$@" install -y -qq --no-install-recommends rabbitmq-server
  in_root "$root" apt-get clean
}

# finish ROOT: the mount point of the state each node binds in, and the version stamp.
finish() {
  local root=$1 version
  mkdir -p "$root/localenv"
  version=$(in_root "$root" dpkg-query -W -f '${Version}' rabbitmq-server)
  echo "$version" >"$root/.built"
  log "$(basename "$root"): rabbitmq-server $version"
}

build_trixie() {
  local root=$CACHE/debian-root/trixie
  built "$root" && return 0
  fetch_debootstrap
  rm -rf "$root.tmp" && mkdir -p "$(dirname "$root")"
  log "debootstrap trixie (minutes)"
  unshare --pid --fork --mount --mount-proc \
    env DEBOOTSTRAP_DIR="$work/debootstrap/usr/share/debootstrap" \
    "$work/debootstrap/usr/sbin/debootstrap" --variant=minbase trixie "$root.tmp" "$MIRROR"
  echo "deb $MIRROR trixie main" >"$root.tmp/etc/apt/sources.list"
  apt_install "$root.tmp"
  rm -rf "$root" && mv "$root.tmp" "$root"
  finish "$root"
}

build_sid() {
  local root=$CACHE/debian-root/sid
  built "$root" && return 0
  build_trixie
  rm -rf "$root.tmp"
  cp -a "$CACHE/debian-root/trixie" "$root.tmp"
  rm -f "$root.tmp/.built"
  echo "deb $MIRROR sid main" >"$root.tmp/etc/apt/sources.list"
  # The mirror serves sid with a Release file past its Valid-Until date.
  apt_install "$root.tmp" -o Acquire::Check-Valid-Until=false
  rm -rf "$root" && mv "$root.tmp" "$root"
  finish "$root"
}

mkdir -p "$work"
case $suite in
  trixie) build_trixie ;;
  sid) build_sid ;;
  *)
    echo "usage: debian-root.sh trixie|sid" >&2
    exit 2
    ;;
esac
