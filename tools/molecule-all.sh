#!/usr/bin/env bash
# Run every molecule scenario, in two lanes at once: much of a scenario's time is spent waiting on
# Docker and on moving the 3.0 GB lab image. Not three: on two cores, three pairs of nodes starting
# Ray and vLLM at once starve Ray's startup ("The current node timed out during startup"). Each scenario's output
# goes to its own log; the wall time of each is printed, and a failed one's log tail, then the
# drills' seconds to detection. Exit status: non-zero when any scenario failed.
# With --with-integration, `make integration` (a real vLLM on this host) runs after lane B, the one
# that ends first, instead of after both lanes: the suite's wall time loses its ~60-100 s.
set -uo pipefail
with_integration=false
if [ "${1:-}" = --with-integration ]; then
  with_integration=true
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--with-integration]" >&2
  exit 2
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo" || exit 1
logs=${SPARKINFER_MOLECULE_LOGS:-$repo/.cache/molecule-logs}
mkdir -p "$logs"
all=$(cd extensions/molecule && find . -mindepth 2 -maxdepth 2 -name molecule.yml | cut -d/ -f2 | sort)
# The longest first in each lane, so the lanes end close together: as measured on a clean clone at d215b47 (s, 2
# cores), e2e 1760 and integration 55 after it (1815), against ray_cluster 575, vllm_serve 546, nccl_network 366,
# vllm_image 275 and gb10_host 93 (1855). With vllm_image after e2e (251706a) the lanes ended at 1896 and 1706. At
# a6e5b75, e2e 1803 + integration 61 against 1926; the fleet's rollout paths then added about 250 s to e2e, so
# integration runs after lane B.
lane_a=(e2e)
lane_b=(ray_cluster vllm_serve nccl_network vllm_image gb10_host)
listed=$(printf '%s\n' "${lane_a[@]}" "${lane_b[@]}" | sort)
if [ "$listed" != "$all" ]; then
  echo "molecule-all: the lanes ($(echo "$listed" | paste -sd' ')) are not the scenarios ($(echo "$all" | paste -sd' '))" >&2
  exit 1
fi

# A run cut short (a CI time limit, a killed session) leaves its scenarios' node containers and
# networks behind. Each scenario's destroy would remove its own, but only once its lane reaches it:
# until then they hold their subnets and, running, the cores. So destroy them all first.
docker_names=$( (docker ps -a --format '{{.Names}}'; docker network ls --format '{{.Name}}') | sort -u)
for scenario in $all; do
  declared=$(python3 tools/molecule-platforms.py names "extensions/molecule/$scenario/molecule.yml" | sort -u)
  leftovers=$(comm -12 <(echo "$declared") <(echo "$docker_names") | paste -sd' ')
  if [ -n "$leftovers" ]; then
    echo "molecule-all: scenario $scenario left $leftovers behind (an earlier run cut short); destroying them"
    if ! molecule destroy -s "$scenario" >"$logs/$scenario-leftovers.log" 2>&1; then
      echo "molecule-all: molecule destroy -s $scenario failed; see $logs/$scenario-leftovers.log" >&2
      exit 1
    fi
  fi
done

# Each scenario creates its own fabric network; Docker refuses a subnet another network holds
# ("Pool overlaps with other one on this address space"), so say which one before anything starts.
scenario_subnets=$(for scenario in $all; do
  python3 tools/molecule-platforms.py subnets "extensions/molecule/$scenario/molecule.yml" | sed "s/^/$scenario /"
done)
shared=$(echo "$scenario_subnets" | awk '{print $3}' | sort | uniq -d)
if [ -n "$shared" ]; then
  echo "molecule-all: scenarios share the subnets $(echo "$shared" | paste -sd' '); give each its own:" >&2
  echo "$scenario_subnets" >&2
  exit 1
fi
while read -r scenario network subnet; do
  for existing in $(docker network ls -q); do
    read -r name subnets < <(docker network inspect -f '{{.Name}} {{range .IPAM.Config}}{{.Subnet}} {{end}}' "$existing")
    if [ "$name" != "$network" ] && [[ " $subnets " == *" $subnet "* ]]; then
      echo "molecule-all: the Docker network $name holds $subnet, which scenario $scenario needs; remove it (lab/down.sh removes the lab's)" >&2
      exit 1
    fi
  done
done <<<"$scenario_subnets"

# The CPU seconds (user and system) of the processes this shell has waited for, into waited_cpu: for a scenario,
# its own processes (molecule, ansible-playbook and its forks, pytest, the docker and ssh clients they ran; for
# integration, not its vLLM, which runs in a container), not what runs in the nodes or containers. Called directly, not in $(...): `times` must run in
# this shell, not in a new process that has waited for nothing.
note_waited_cpu() {
  local file=$logs/.times.$BASHPID
  times >"$file"
  waited_cpu=$(awk 'NR == 2 { for (f = 1; f <= 2; f++) { split($f, part, /[ms]/); total += part[1] * 60 + part[2] }; printf "%d\n", total }' "$file")
  rm -f "$file"
}

run_lane() {
  local scenario start code cpu_before
  for scenario in "$@"; do
    start=$(date +%s)
    note_waited_cpu
    cpu_before=$waited_cpu
    if [ "$scenario" = integration ]; then
      make --no-print-directory integration >"$logs/$scenario.log" 2>&1
    else
      molecule test -s "$scenario" 2>&1 | python3 tools/molecule-phases.py >"$logs/$scenario.log"
    fi
    code=${PIPESTATUS[0]}
    note_waited_cpu
    echo "$scenario $code $(( $(date +%s) - start )) $(( waited_cpu - cpu_before ))" >>"$logs/results"
  done
}

: >"$logs/results"
drill_report=$repo/.cache/drills/report.json
rm -f "$drill_report"
# The share of the machine's cores the lanes kept busy (user, nice, system, irq, softirq, steal of
# /proc/stat): near 100 % means only less work shortens the suite, not more lanes.
cpu_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
read -r busy_before all_before < <(cpu_ticks)
if $with_integration; then
  lane_b+=(integration)
fi
# Each lane in a subshell of its own: `times` there counts only its own scenarios. Run in this shell, lane B's count
# would take in lane A's whole CPU once bash reaps lane A's subshell (577 CPU-s for gb10_host at d215b47).
run_lane "${lane_a[@]}" &
lane_a_pid=$!
run_lane "${lane_b[@]}" &
lane_b_pid=$!
wait "$lane_a_pid" "$lane_b_pid"
read -r busy_after all_after < <(cpu_ticks)

failed=0
own_cpu=0
while read -r scenario code seconds cpu; do
  own_cpu=$(( own_cpu + cpu ))
  printf '%-8s %-14s %s in %ss, its own processes %s CPU-s (log: %s)\n' "$([ "$scenario" = integration ] && echo pytest || echo molecule)" "$scenario" \
    "$([ "$code" = 0 ] && echo passed || echo FAILED)" "$seconds" "$cpu" "$logs/$scenario.log"
  if [ "$code" != 0 ]; then
    failed=1
    tail -n 60 "$logs/$scenario.log" | sed 's/\x1b\[[0-9;]*m//g'
  fi
  grep -m1 '^phases: ' "$logs/$scenario.log" | sed 's/^/         /'
done <"$logs/results"
busy_cpu=$(( (busy_after - busy_before) / $(getconf CLK_TCK) ))
echo "CPU busy during the lanes: $(( 100 * (busy_after - busy_before) / (all_after - all_before) )) % of $(nproc) cores," \
  "$busy_cpu CPU-s: $own_cpu in the scenarios' own processes, $(( busy_cpu - own_cpu )) in the nodes and the Docker engine"
if [ -f "$drill_report" ]; then
  echo "drills: seconds from the start of the failing playbook to the failure"
  python3 bench/drills.py --report-only
fi
exit "$failed"
