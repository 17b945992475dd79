#!/usr/bin/env bash
# Load a host image into a lab node's own Docker engine, as an operator without a registry would
# (docker save, then docker load), unless the node already holds the same image ID.
# Usage: load-image.sh NODE_CONTAINER IMAGE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=$1
image=$2
wanted=$(docker image inspect --format '{{.Id}}' "$image")
if [ "$(docker exec "$node" docker image inspect --format '{{.Id}}' "$image" 2>/dev/null)" != "$wanted" ]; then
  start=$(date +%s)
  docker exec -i "$node" docker load <"$("$here/image-tarball.sh" "$image")" >/dev/null
  echo "seed: loaded $image into $node in $(( $(date +%s) - start ))s" >&2
fi
