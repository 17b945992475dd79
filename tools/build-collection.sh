#!/usr/bin/env bash
# Build the collection artifact and install it into a temporary path, which proves galaxy.yml
# and build_ignore; then check that the artifact holds no test, lab or CI file.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
version=$(awk '$1 == "version:" { print $2 }' "$repo/galaxy.yml")
artifact="$repo/sparkinfer-cluster-$version.tar.gz"
work=$(mktemp -d /tmp/sparkinfer-build.XXXXXX)
trap 'rm -rf "$work"' EXIT

ansible-galaxy collection build --force --output-path "$repo" "$repo" >/dev/null
[ -f "$artifact" ] || { echo "build: $artifact was not produced" >&2; exit 1; }
# Isolated from this checkout (which is on ANSIBLE_COLLECTIONS_PATH and would count as installed).
ANSIBLE_COLLECTIONS_PATH="$work" ansible-galaxy collection install --force --offline --no-deps -p "$work" "$artifact" >/dev/null
installed="$work/ansible_collections/sparkinfer/cluster"
[ -f "$installed/MANIFEST.json" ] || { echo "build: the artifact did not install" >&2; exit 1; }
leaked=$(tar -tzf "$artifact" | grep -E '^(tests|lab|extensions|\.ci|\.cache|tools|bench|inventories/lab)/' || true)
[ -z "$leaked" ] || { echo "build: the artifact holds files build_ignore should exclude:" >&2; echo "$leaked" >&2; exit 1; }
ANSIBLE_COLLECTIONS_PATH="$work" ansible-doc -t module sparkinfer.cluster.gb10_facts >/dev/null
echo "build: $(basename "$artifact") ($(du -k "$artifact" | cut -f1) KiB) builds and installs"
