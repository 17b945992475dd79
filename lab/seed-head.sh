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

"$here/load-image.sh" "$node" "$image"

generated=$("$here/tiny-model/generate.sh" "$image")
if ! docker exec "$node" test -f "$model/config.json"; then
  docker exec "$node" mkdir -p "$model"
  tar -C "$generated" -c . | docker exec -i "$node" tar -C "$model" -x
  echo "seed: copied the tiny model to $model on $node" >&2
fi
