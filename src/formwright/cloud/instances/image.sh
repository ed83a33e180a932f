#!/bin/sh
# Build, once per machine, the Debian bookworm root every booting local-cloud instance overlays, read-only
# (docs/local-cloud.md, "Booting instances"). Reused when present; built into a temporary folder and renamed
# into place, so an interrupted build leaves nothing half made. Needs root and Debian's `debootstrap`.
#   usage: image.sh [CACHE_DIR]     (default: ${XDG_CACHE_HOME:-$HOME/.cache}/formwright/instances)
set -eu
cache="${1:-${XDG_CACHE_HOME:-$HOME/.cache}/formwright/instances}"
image="$cache/bookworm"
mirror="${FORMWRIGHT_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
if [ -f "$image/.formwright-image" ]; then
    echo "image ready: $image"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "image.sh: building the instance image needs root (debootstrap chroots): run it as root" >&2
    exit 2
fi
if ! command -v debootstrap >/dev/null 2>&1 && [ ! -x /usr/sbin/debootstrap ]; then
    echo "image.sh: debootstrap is missing: apt-get install -y debootstrap" >&2
    exit 2
fi
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9                         # one build at a time; a second caller waits and then finds the image
if [ -f "$image/.formwright-image" ]; then
    echo "image ready: $image"
    exit 0
fi
work="$cache/.bookworm.building"
rm -rf "$work"
PATH="$PATH:/usr/sbin:/sbin" debootstrap --variant=minbase \
    --include=python3,iproute2,procps,ca-certificates bookworm "$work" "$mirror"
rm -rf "$work/var/cache/apt/archives/"*.deb   # the package lists stay: apt installs (and refusals.py reads them)
date -u +%Y-%m-%dT%H:%M:%SZ > "$work/.formwright-image"
rm -rf "$image"
mv "$work" "$image"
echo "image ready: $image"
