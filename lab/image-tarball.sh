#!/usr/bin/env bash
# Print the path of a `docker save` tarball of IMAGE, written once per image ID and kept in the
# machine's cache: docker save takes 30 to 50 s for the 3.0 GB lab vLLM image even on an idle
# machine, and the scenarios load the image into seven nodes. Older tarballs of IMAGE are removed.
# Usage: image-tarball.sh IMAGE
set -euo pipefail
image=$1
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}/image-tarballs
mkdir -p "$cache"
id=$(docker image inspect --format '{{.Id}}' "$image")
prefix=$(echo "$image" | tr '/:' '__')
tarball="$cache/$prefix-${id#sha256:}.tar"
(
  flock 9   # the molecule lanes seed their nodes at the same moment
  if [ ! -f "$tarball" ]; then
    rm -f "$cache/$prefix"-*.tar
    docker save -o "$tarball.partial" "$image"
    mv "$tarball.partial" "$tarball"
  fi
) 9>"$cache/$prefix.lock"
echo "$tarball"
