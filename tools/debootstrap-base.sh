#!/usr/bin/env bash
# Build (once) a Debian base image by debootstrap from DIR/packages.txt and print its reference.
# The tag is a hash of the suite and of packages.txt, so an unchanged list reuses the image.
# Usage: debootstrap-base.sh DIR IMAGE_REPO   (e.g. lab/node-image sparkinfer-lab-node-base)
set -euo pipefail
dir=$(cd "$1" && pwd)
repo=$2
tools=$(cd "$(dirname "$0")" && pwd)
suite=bookworm

packages_hash=$(cd "$dir" && sha256sum packages.txt | sha256sum | cut -c1-16)
base="$repo:$(echo "$suite $packages_hash" | sha256sum | cut -c1-16)"
if docker image inspect "$base" >/dev/null 2>&1; then
  echo "$base"
  exit 0
fi
start=$(date +%s)
mirror=$("$tools/debian-mirror.sh" "$suite")
packages=$(grep -v '^#' "$dir/packages.txt" | grep -v '^[[:space:]]*$' | paste -sd, -)
work=$(mktemp -d /var/tmp/sparkinfer-rootfs.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "debootstrap $suite from $mirror for $repo" >&2
debootstrap --variant=minbase --include="$packages" "$suite" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -n 40 "$work/debootstrap.log" >&2
  exit 1
}
# apt lists, package caches, docs and man pages are not needed in an image.
rm -rf "$work"/rootfs/var/lib/apt/lists/* "$work"/rootfs/var/cache/apt/*.bin "$work"/rootfs/var/cache/apt/archives/*.deb \
  "$work"/rootfs/usr/share/doc/* "$work"/rootfs/usr/share/man/*
tar -C "$work/rootfs" -c . | docker import - "$base" >/dev/null
echo "debootstrapped $base in $(( $(date +%s) - start ))s" >&2
echo "$base"
