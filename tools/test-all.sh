#!/usr/bin/env bash
# The whole test suite; prints each gate's and the total wall time.
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

# The static gates need neither Docker nor the lab. They run beside the lab's build on a fresh machine
# and beside the molecule lanes on a warm one, which leave about a tenth of two cores idle while they wait on
# Docker, Ray and vLLM: the suite's wall time loses their two minutes. Their output is printed when they end.
static_gates() {
  timings=()
  gate yamllint make --no-print-directory yamllint
  gate changelog make --no-print-directory changelog
  gate ansible-lint make --no-print-directory ansible-lint
  gate python-lint make --no-print-directory python-lint
  gate sanity make --no-print-directory sanity
  gate units make --no-print-directory units
  gate build make --no-print-directory build
  printf '%s\n' "${timings[@]}" >"$static_timings"
}

static_failed() {
  [ -s "$static_status" ] && [ "$(cat "$static_status")" != 0 ]
}

# The molecule lanes, stopped as soon as a static gate fails (their node containers are destroyed by the next
# run's tools/molecule-all.sh): a red suite says so in minutes, not after the lanes' half hour.
molecule_unless_static_fails() {
  local code=0
  setsid make --no-print-directory molecule-and-integration &
  local molecule_pid=$!
  while kill -0 "$molecule_pid" 2>/dev/null; do
    if static_failed; then
      echo "=== a static gate failed: stopping the molecule lanes"
      kill -TERM -- "-$molecule_pid" 2>/dev/null || true
      break
    fi
    sleep 1
  done
  wait "$molecule_pid" || code=$?
  if static_failed; then
    wait_static_gates
    return 1
  fi
  return "$code"
}

# Print the static gates' output once they end, and add their times to the suite's.
wait_static_gates() {
  local line
  while [ ! -s "$static_status" ]; do sleep 1; done
  cat "$static_log"
  [ "$(cat "$static_status")" = 0 ] || return 1
  while read -r line; do
    timings+=("$line (beside the lab)")
  done <"$static_timings"
}

gate host make --no-print-directory host
# The lab images build, both at once (minutes on a fresh machine: debootstrap, wheel downloads), then
# a throwaway node takes the first seed (lab/prime-seeds.sh), while the virtualenv is made and the
# static gates run; the molecule gate waits for them. On a warm machine they only re-tag and link.
images_log=$(mktemp /tmp/sparkinfer-lab-images.XXXXXX)
make --no-print-directory -j2 lab-seeds >"$images_log" 2>&1 &
images_pid=$!
gate setup make --no-print-directory setup

static_log=$(mktemp /tmp/sparkinfer-static-gates.XXXXXX)
static_status=$(mktemp /tmp/sparkinfer-static-status.XXXXXX)
static_timings=$(mktemp /tmp/sparkinfer-static-timings.XXXXXX)
trap 'rm -f "$static_log" "$static_status" "$static_timings"' EXIT
(
  code=0
  (static_gates) >"$static_log" 2>&1 || code=$?
  echo "$code" >"$static_status"
) &

gate "lab images+seeds (wait)" lab_images_and_seeds
if static_failed; then
  wait_static_gates || exit 1
fi
gate molecule+integration molecule_unless_static_fails
gate "static gates (wait)" wait_static_gates

echo "=== timings"
printf '%s\n' "${timings[@]}"
total=$(( $(date +%s) - suite_start ))
printf 'test suite wall time: %dm%02ds (%ds)\n' $((total / 60)) $((total % 60)) "$total"
