#!/usr/bin/env bash
# Bring to a lab node what an operator brings to the head of a fresh Spark pair: the lab vLLM
# image (no registry: docker save, once per image ID, then docker load into the node's own engine)
# and the model (the tiny Qwen3-MoE, generated with the image's own transformers, once per
# machine). What the node has is kept.
# Usage: seed-head.sh NODE_CONTAINER [MODELS_DIR]   (MODELS_DIR defaults to /opt/sparkinfer/models)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=$1
models=${2:-/opt/sparkinfer/models}
image=sparkinfer-lab-vllm:latest
model="$models/tiny-qwen3-moe"
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
generator="$here/tiny-model/make_tiny_qwen3_moe.py"

"$here/load-image.sh" "$node" "$image"

# The model is generated once per machine (14 s on an idle machine, importing torch and transformers;
# far longer on two busy cores) and kept while the image and the generator are unchanged.
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
    echo "seed: generated the tiny model in $generated" >&2
  fi
) 9>"$cache/tiny-qwen3-moe.lock"
if ! docker exec "$node" test -f "$model/config.json"; then
  docker exec "$node" mkdir -p "$model"
  tar -C "$generated" -c . | docker exec -i "$node" tar -C "$model" -x
  echo "seed: copied the tiny model to $model on $node" >&2
fi
