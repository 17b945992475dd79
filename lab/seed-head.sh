#!/usr/bin/env bash
# Bring to a lab node what an operator brings to the head of a fresh Spark pair: the lab vLLM
# image (no registry: docker save | docker load into the node's own engine) and the model (the
# tiny Qwen3-MoE, generated with the image's own transformers). What the node has is kept.
# Usage: seed-head.sh NODE_CONTAINER [MODELS_DIR]   (MODELS_DIR defaults to /opt/sparkinfer/models)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
node=$1
models=${2:-/opt/sparkinfer/models}
image=sparkinfer-lab-vllm:latest
model="$models/tiny-qwen3-moe"

wanted=$(docker image inspect --format '{{.Id}}' "$image")
if [ "$(docker exec "$node" docker image inspect --format '{{.Id}}' "$image" 2>/dev/null)" != "$wanted" ]; then
  start=$(date +%s)
  docker save "$image" | docker exec -i "$node" docker load >/dev/null
  echo "seed: loaded $image into $node in $(( $(date +%s) - start ))s" >&2
fi
if ! docker exec "$node" test -f "$model/config.json"; then
  docker exec "$node" mkdir -p "$models"
  docker cp "$here/tiny-model/make_tiny_qwen3_moe.py" "$node:/tmp/make_tiny_qwen3_moe.py"
  docker exec "$node" docker run --rm --network none -v "$models:/models" -v /tmp/make_tiny_qwen3_moe.py:/make_tiny_qwen3_moe.py:ro \
    --entrypoint python3 "$image" /make_tiny_qwen3_moe.py /models/tiny-qwen3-moe >/dev/null
  echo "seed: generated $model on $node" >&2
fi
