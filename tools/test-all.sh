#!/usr/bin/env bash
# The whole test suite, cheapest gate first; prints each gate's and the total wall time.
# Sets up everything it needs: Docker engine, virtualenv, collection path, the lab images.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
suite_start=$(date +%s)
timings=()

gate() {
  local name=$1 start
  shift
  start=$(date +%s)
  echo "=== $name"
  if ! "$@"; then
    echo "=== $name FAILED after $(( $(date +%s) - start ))s (total $(( $(date +%s) - suite_start ))s)"
    exit 1
  fi
  timings+=("$(printf '%-26s %5ss' "$name" "$(( $(date +%s) - start ))")")
}

# The background build of the lab images and their first seed (below): wait for it and print what it said.
lab_images_and_seeds() {
  local code=0
  wait "$images_pid" || code=$?
  cat "$images_log"
  rm -f "$images_log"
  return "$code"
}

gate host make --no-print-directory host
# The lab images build, both at once (minutes on a fresh machine: debootstrap, wheel downloads), then
# a throwaway node takes the first seed (lab/prime-seeds.sh), while the virtualenv is made and the
# static gates run; the molecule gate waits for them. On a warm machine they only re-tag and link.
images_log=$(mktemp /tmp/sparkinfer-lab-images.XXXXXX)
make --no-print-directory -j2 lab-seeds >"$images_log" 2>&1 &
images_pid=$!
gate setup make --no-print-directory setup
gate yamllint make --no-print-directory yamllint
gate changelog make --no-print-directory changelog
gate ansible-lint make --no-print-directory ansible-lint
gate python-lint make --no-print-directory python-lint
gate sanity make --no-print-directory sanity
gate units make --no-print-directory units
gate build make --no-print-directory build
gate "lab images+seeds (wait)" lab_images_and_seeds
gate molecule+integration make --no-print-directory molecule-and-integration

echo "=== timings"
printf '%s\n' "${timings[@]}"
total=$(( $(date +%s) - suite_start ))
printf 'test suite wall time: %dm%02ds (%ds)\n' $((total / 60)) $((total % 60)) "$total"
