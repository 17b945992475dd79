#!/usr/bin/env bash
# Make this checkout importable as the sparkinfer.cluster collection:
# .cache/collections/ansible_collections/sparkinfer/cluster -> the checkout.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$repo/.cache/collections/ansible_collections/sparkinfer"
ln -sfn "$repo" "$repo/.cache/collections/ansible_collections/sparkinfer/cluster"
