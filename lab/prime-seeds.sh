#!/usr/bin/env bash
# Make, before the molecule lanes start, what the first seed of a lab node needs: the image store
# that lab/load-image.sh keeps per image ID, and the tiny model (lab/seed-head.sh). A throwaway node
# takes that first seed, a real `docker save` and `docker load` (a minute or two on a fresh machine),
# so that every scenario's nodes get hard links instead, and neither lane waits on the other's load.
# On a machine that holds both already, it only boots the node and links the store (about 5 s).
# Usage: prime-seeds.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lab.conf
. "$here/lab.conf"
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
node=sparkinfer-prime-seeds
node_dir="$cache/lab-nodes/$node"
remove_node() {
  docker rm -f "$node" >/dev/null 2>&1 || true
  rm -rf "${node_dir:?}"
}
trap remove_node EXIT
remove_node
mkdir -p "$node_dir/docker"
# As a molecule node runs (extensions/molecule/_shared/vars/lab_node.yml), with no network.
docker run -d --name "$node" --hostname "$node" --network none "${LAB_NODE_RUN_OPTIONS[@]}" \
  -v "$node_dir/docker:/var/lib/docker" \
  sparkinfer-lab-node:latest /lib/systemd/systemd >/dev/null
lab_wait_node_ready "$node"
"$here/seed-head.sh" "$node"
