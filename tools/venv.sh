#!/usr/bin/env bash
# Create (once per machine and requirements) the development virtualenv and link it as .venv; or, given
# `mutation`, the one make mutation runs in (requirements-mutation.txt), printing its path without linking it.
# A venv lives in a machine-wide cache keyed by the hash of its requirement files, so a fresh
# clone on the same machine reuses it and a changed pin builds a new one.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${SPARKINFER_CACHE:-/var/cache/sparkinfer}
python=${SPARKINFER_PYTHON:-python3.11}
requirements=("$repo/requirements-dev.txt")
prefix=venv
if [ "${1:-}" = mutation ]; then
  requirements=("$repo/requirements-mutation.txt" "$repo/requirements-dev.txt")
  prefix="venv-mutation"
fi
key=$(cat "${requirements[@]}" "$repo/constraints-dev.txt" | sha256sum | cut -c1-16)
venv="$cache/$prefix-$key"

if [ ! -x "$venv/bin/ansible-playbook" ] || [ ! -f "$venv/.complete" ]; then
  command -v "$python" >/dev/null || { echo "venv: $python not found (the toolchain pins ansible-core 2.19, which needs Python 3.11)" >&2; exit 1; }
  rm -rf "$venv"
  mkdir -p "$cache"
  echo "creating $venv" >&2
  "$python" -m venv "$venv"
  "$venv/bin/pip" install -q -r "${requirements[0]}" -c "$repo/constraints-dev.txt" >&2
  touch "$venv/.complete"
fi
if [ "$prefix" = venv ]; then
  ln -sfn "$venv" "$repo/.venv"
fi
echo "$venv"
