#!/usr/bin/env bash
# Build the lab node image: a stand-in DGX Spark (systemd, sshd, sudo, python3, its own Docker
# engine, the GB10 stand-in tools) from Debian's archive with debootstrap.
# Cached in two steps, each tagged with a hash of its inputs: the debootstrapped base (packages.txt)
# and the final image (everything under this folder). A second run with the same inputs only
# re-tags. Prints the image reference on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=$(cd "$here/../../tools" && pwd)
repo_name=${SPARKINFER_LAB_NODE_IMAGE:-sparkinfer-lab-node}

hash_of() { (cd "$here" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-16); }
start=$(date +%s)
base=$("$tools/debootstrap-base.sh" "$here" "$repo_name-base")
image="$repo_name:$(echo "$base $(hash_of .)" | sha256sum | cut -c1-16)"

if docker image inspect "$image" >/dev/null 2>&1; then
  echo "node image $image is up to date" >&2
  docker tag "$image" "$repo_name:latest"
  echo "$image"
  exit 0
fi

docker build -q -t "$image" --build-arg BASE="$base" "$here" >/dev/null
docker tag "$image" "$repo_name:latest"
echo "built node image $image in $(( $(date +%s) - start ))s" >&2
echo "$image"
