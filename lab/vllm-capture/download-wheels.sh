#!/usr/bin/env bash
# Download (once per machine and wheel set) the wheels of the lab's vLLM: vLLM's CPU build 0.32.0
# with Ray, as lab/vllm-image/requirements.txt asks and lab/vllm-image/constraints.txt pins. The
# lab vLLM image and the host venv of the capture tools (setup-venv.sh) install from them. Prints the wheels folder.
set -euo pipefail
image=$(cd "$(dirname "$0")/../vllm-image" && pwd)
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
wheels="$cache/wheels-vllm-$(cat "$image/requirements.txt" "$image/constraints.txt" | sha256sum | cut -c1-16)"
if [ ! -f "$wheels/.complete" ]; then
  rm -rf "$wheels.partial"
  mkdir -p "$wheels.partial"
  start=$(date +%s)
  python3.11 -m pip download -q -d "$wheels.partial" -r "$image/requirements.txt" -c "$image/constraints.txt" 2>&1 | grep -v '^WARNING: Location' >&2 || true
  [ -n "$(ls "$wheels.partial")" ] || { echo "download-wheels: pip downloaded nothing into $wheels.partial" >&2; exit 1; }
  touch "$wheels.partial/.complete"
  rm -rf "$wheels"
  mv "$wheels.partial" "$wheels"
  echo "downloaded $(find "$wheels" -name "*.whl" | wc -l) wheels into $wheels in $(( $(date +%s) - start ))s" >&2
fi
echo "$wheels"
