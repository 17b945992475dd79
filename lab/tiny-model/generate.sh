#!/usr/bin/env bash
# Generate the tiny Qwen3-MoE with the lab vLLM image's own transformers, once per machine, and print
# its folder. Kept while the image and the generator are unchanged (14 s on an idle machine, importing
# torch and transformers; far longer on two busy cores). Lab nodes get a copy (seed-head.sh); the
# integration tests serve it from the host.
# Usage: generate.sh [IMAGE]   (IMAGE defaults to sparkinfer-lab-vllm:latest)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${1:-sparkinfer-lab-vllm:latest}
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
generator="$here/make_tiny_qwen3_moe.py"
image_id=$(docker image inspect --format '{{.Id}}' "$image")
generated="$cache/tiny-qwen3-moe-$( (echo "$image_id"; sha256sum <"$generator") | sha256sum | cut -c1-16)"
mkdir -p "$cache"
(
  flock 9   # the molecule lanes seed their heads at the same moment
  if [ ! -f "$generated/config.json" ]; then
    work=$(mktemp -d "$cache/tiny-qwen3-moe.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    docker run --rm --network none -v "$work:/models" -v "$generator:/make_tiny_qwen3_moe.py:ro" \
      --entrypoint python3 "$image" /make_tiny_qwen3_moe.py /models/tiny-qwen3-moe >/dev/null
    rm -rf "$generated"
    mv "$work/tiny-qwen3-moe" "$generated"
    echo "tiny model: generated in $generated" >&2
  fi
) 9>"$cache/tiny-qwen3-moe.lock"
echo "$generated"
