#!/usr/bin/env bash
# Put a host image into a lab node's own Docker engine, unless the node already holds the same
# image ID. The first node to get an image ID gets it as an operator without a registry would
# (docker save, then docker load: 78 s for the 3.0 GB lab vLLM image); the engine's image store is
# then kept per image ID, and each later node with an empty engine whose storage is a directory of
# the machine (a molecule node: extensions/molecule/_shared/vars/lab_node.yml) gets a copy of that store
# made of hard links, with its engine stopped: the same layers and the same image ID in a few
# seconds. The node's engine only adds to that store (a container writes in its own upper
# directory), never changes a layer in place.
# Usage: load-image.sh NODE_CONTAINER IMAGE
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=$1
image=$2
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}/image-stores
wanted=$(docker image inspect --format '{{.Id}}' "$image")
node_has() { [ "$(docker exec "$node" docker image inspect --format '{{.Id}}' "$image" 2>/dev/null)" = "$wanted" ]; }
if node_has; then
  exit 0
fi
start=$(date +%s)
# The node's engine storage, when it is a directory of this machine.
engine_dir=$(docker inspect --format '{{range .Mounts}}{{if and (eq .Destination "/var/lib/docker") (eq .Type "bind")}}{{.Source}}{{end}}{{end}}' "$node")
node_image=$(docker inspect --format '{{.Image}}' "$node")
store="$cache/$(echo "$node_image $wanted" | sha256sum | cut -c1-16)"
engine_empty() { [ -z "$(docker exec "$node" sh -c 'docker image ls -aq; docker ps -aq')" ]; }
restart_engine_with() {
  docker exec "$node" systemctl stop docker.socket docker.service
  "$@"
  docker exec "$node" systemctl start docker.service
}
copy_store() {   # FROM TO: the engine's image store (image metadata and layers), as hard links
  rm -rf "$2/image" "$2/overlay2"
  cp -al "$1/image" "$1/overlay2" "$2/"
}
mkdir -p "$cache"
{
  flock 9   # the molecule lanes seed their nodes at the same moment
  if [ -n "$engine_dir" ] && [ -d "$store/image" ] && engine_empty; then
    restart_engine_with copy_store "$store" "$engine_dir"
    how="linked the image store kept for it"
  else
    docker exec -i "$node" docker load <"$("$here/image-tarball.sh" "$image")" >/dev/null
    how="loaded it"
    if [ -n "$engine_dir" ] && [ ! -d "$store/image" ] && [ "$(docker exec "$node" docker image ls -aq | wc -l)" = 1 ] \
      && [ -z "$(docker exec "$node" docker ps -aq)" ]; then
      rm -rf "${cache:?}"/*/   # one store per machine: the lab's current image on the current node image
      mkdir -p "$store.partial"
      restart_engine_with copy_store "$engine_dir" "$store.partial"
      mv "$store.partial" "$store"
      how="$how and kept its image store"
    fi
  fi
} 9>"$cache/.lock"
if ! node_has; then
  echo "seed: $node does not hold $image ($wanted) after seeding it" >&2
  exit 1
fi
echo "seed: $image on $node: $how in $(( $(date +%s) - start ))s" >&2
