#!/usr/bin/env bash
# Seed a lab head (seed-head.sh) and give the other nodes the same image and the same model, the
# lab's quick way, for scenarios whose subject comes after vllm_image (which is what moves them
# between nodes over the fabric, and has scenarios of its own).
# Usage: seed-nodes.sh HEAD_CONTAINER OTHER_CONTAINER... (models in /opt/sparkinfer/models)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
head=$1
shift
models=/opt/sparkinfer/models
image=sparkinfer-lab-vllm:latest

"$here/seed-head.sh" "$head" "$models"
for node in "$@"; do
  "$here/load-image.sh" "$node" "$image"
  # The head's model, byte for byte (a model generated on each node would have other random weights).
  docker exec "$node" rm -rf "$models/tiny-qwen3-moe"
  docker exec "$node" mkdir -p "$models"
  docker exec "$head" tar -C "$models" -c tiny-qwen3-moe | docker exec -i "$node" tar -C "$models" -x
done
