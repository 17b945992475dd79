"""The converged chain on two lab nodes: served across both, the status table, a benchmark.

First of the scenario's test files (molecule.yml): the drills come next, on the same pair.
"""

from __future__ import annotations

import json
import re
import shlex

from chain_lab import PLAYBOOKS, api_key, assert_rendezvous_guarded, node, run_playbook

HEAD_IP, WORKER_IP = "192.168.183.11", "192.168.183.12"
ENDPOINT = f"http://{HEAD_IP}:8000"


def post_chat(host, key: str) -> tuple[int, dict]:
    body = {"model": "tiny-qwen3-moe", "messages": [{"role": "user", "content": "Hello"}], "max_tokens": 4}
    script = (
        "import json, urllib.request, urllib.error\n"
        f"request = urllib.request.Request({ENDPOINT + '/v1/chat/completions'!r}, data={json.dumps(body).encode()!r},"
        f" headers={{'Authorization': 'Bearer {key}', 'Content-Type': 'application/json'}})\n"
        "try:\n"
        "    response = urllib.request.urlopen(request, timeout=120)\n"
        "    print(response.status); print(response.read().decode())\n"
        "except urllib.error.HTTPError as exc:\n"
        "    print(exc.code); print(json.dumps({'error': exc.read().decode()}))\n"
    )
    status, answer = host.check_output(f"python3 -c {shlex.quote(script)}").split("\n", 1)
    return int(status), json.loads(answer)


def test_the_worker_node_gets_a_chat_completion_from_the_endpoint():
    status, answer = post_chat(node("e2e-spark-2"), api_key())
    assert status == 200, answer
    assert answer["choices"] and answer["usage"]["completion_tokens"] > 0


def test_both_nodes_hold_one_image_and_run_a_vllm_rank_and_with_the_mp_executor_no_ray():
    ids = {node(name).check_output("docker image inspect --format '{{.Id}}' sparkinfer-lab-vllm:latest") for name in ("e2e-spark-1", "e2e-spark-2")}
    assert len(ids) == 1
    for name in ("e2e-spark-1", "e2e-spark-2"):
        host = node(name)
        assert host.check_output("docker ps -a --format '{{.Names}}'").split() == ["sparkinfer-vllm"]
        # Nor Ray's firewall chain, its boot unit or its token: the role ran in its absent state.
        assert host.run("iptables -S SPARKINFER-RAY").rc != 0
        assert not host.file("/etc/systemd/system/sparkinfer-ray-firewall.service").exists
        assert not host.file("/etc/sparkinfer/ray-auth-token").exists
    follower_args = json.loads(node("e2e-spark-2").check_output("docker inspect --format '{{json .Args}}' sparkinfer-vllm"))
    assert follower_args[-1] == "--headless"
    # The mp rendezvous on the head is for the cluster's nodes only; the follower has none to guard.
    assert_rendezvous_guarded()
    assert node("e2e-spark-2").run("iptables -S SPARKINFER-VLLM").rc != 0
    # The worker accepts the head's image transfer key (teardown withdraws it).
    assert node("e2e-spark-2").run("grep -rl sparkinfer-transfer@ /root/.ssh /home").stdout.strip() != ""


def test_status_prints_one_table_for_the_cluster():
    code, output = run_playbook(PLAYBOOKS / "status.yml", {})
    assert code == 0, output[-3000:]
    assert "Cluster of e2e-spark-1 (2 nodes): serving" in output
    assert "Fleet of 1 cluster - 1 serving, 0 degraded, 0 down" in output
    assert re.search(rf"e2e-spark-1 +{HEAD_IP} +[0-9a-f]{{12}} +running +absent +- ", output), output[-3000:]
    assert re.search(rf"e2e-spark-2 +{WORKER_IP} +[0-9a-f]{{12}} +running +absent +- ", output), output[-3000:]
    assert "Ray: not running" in output
    assert "vLLM: 0.32.0, Qwen3MoeForCausalLM, quantization None, tp 1 x pp 2, max_model_len 512, ready at ready" in output
    assert f"Endpoint: {ENDPOINT}/v1 serving tiny-qwen3-moe" in output
    # Read from the server's /metrics with the API key: the smoke test's chat completion is counted.
    assert re.search(r"Metrics: 0 running, 0 waiting, KV cache 0\.0% used, [1-9][0-9]* prompt and [1-9][0-9]* generated tokens since start", output), output[
        -3000:
    ]
    assert "msg: |-" in output and "'" not in output.split("msg: |-", 1)[1].split("PLAY RECAP")[0]
    assert re.search(r"Seconds per stage: .*architecture_resolved=[0-9.]+, .*kv_cache_ready=[0-9.]+, .*ready=[0-9.]+", output), output[-3000:]
    assert re.search(r"changed=0 +unreachable=0 +failed=0", output)


def test_the_chain_serves_by_the_labs_recipe():
    # The lab inventory sets sparkinfer_recipe: tiny-qwen3-moe and no serve spec of its own: the ranks run the recipe's.
    head = node("e2e-spark-1")
    args = json.loads(head.check_output("docker inspect --format '{{json .Args}}' sparkinfer-vllm"))
    assert args[:7] == [
        "serve",
        "/opt/sparkinfer/models/tiny-qwen3-moe",
        "--served-model-name",
        "tiny-qwen3-moe",
        "--tensor-parallel-size",
        "1",
        "--pipeline-parallel-size",
    ]
    assert args[args.index("--max-model-len") + 1] == "512"
    # The recipe's loader, and the gate held vLLM's engine config to it (load_format=safetensors in the launch's log facts).
    assert args[args.index("--load-format") + 1] == "safetensors"
    env = json.loads(head.check_output("docker inspect --format '{{json .Config.Env}}' sparkinfer-vllm"))
    assert "VLLM_CPU_KVCACHE_SPACE=1" in env
    record = json.loads(head.check_output("cat /etc/sparkinfer/sparkinfer-vllm.json"))
    assert (record["image"], record["vllm_log"]["architecture"]) == ("sparkinfer-lab-vllm:latest", "Qwen3MoeForCausalLM")
    assert (record["vllm_log"]["load_format"], record["vllm_log"]["speculative_method"]) == ("safetensors", None)


BENCH = {
    "vllm_serve_bench_concurrencies": [1, 2],
    "vllm_serve_bench_input_len": 32,
    "vllm_serve_bench_output_len": 8,
    "vllm_serve_bench_num_prompts": 4,
}


def bench_row(concurrency: int) -> str:
    """The table's line of one run of 4 requests: throughputs, then latencies mean / p50 / p99."""
    latencies = r"[0-9.]+ / [0-9.]+ / [0-9.]+"
    return rf" {concurrency} 4 [0-9.]+ [0-9.]+ {latencies} {latencies}"


def test_a_benchmark_measures_the_endpoint_keeps_its_json_fails_below_its_floor_and_status_shows_it(tmp_path):
    # One run serves both paths: the measure and its JSON, and the floor at the highest concurrency, which no CPU build
    # reaches. A benchmark that passes its floor is the fleet's (test_fleet_4_...).
    code, output = run_playbook(
        PLAYBOOKS / "benchmark.yml", {**BENCH, "vllm_serve_bench_min_output_throughput": 100000, "vllm_serve_bench_results_dir": str(tmp_path)}
    )
    assert code == 2, output[-3000:]
    # The output as run_playbook returns it: each run of spaces one space.
    assert "concurrency requests req/s output tok/s TTFT mean / p50 / p99 ms ITL mean / p50 / p99 ms" in output, output[-3000:]
    assert re.search(bench_row(1), output) and re.search(bench_row(2), output), output[-3000:]
    below = re.search(r"output token throughput [0-9.]+ tok/s at concurrency 2 is below the floor of 100000 tok/s", output)
    assert below, output[-3000:]
    # Kept before the gate failed the run.
    kept = sorted((tmp_path / "e2e-spark-1").glob("*.json"))
    assert len(kept) == 1
    result = json.loads(kept[0].read_text(encoding="utf-8"))
    assert (result["passed"], result["min_output_throughput"], result["recipe"], result["served_model_name"], result["image"]) == (
        False,
        100000,
        "tiny-qwen3-moe",
        "tiny-qwen3-moe",
        "sparkinfer-lab-vllm:latest",
    )
    assert [(run["concurrency"], run["completed"], run["failed"]) for run in result["results"]] == [(1, 4, 0), (2, 4, 0)]
    assert all(run["output_throughput"] > 0 and run["ttft_ms"]["p99"] >= run["ttft_ms"]["median"] > 0 for run in result["results"])
    assert result["results"][0]["output_tokens"] == 4 * 8  # --ignore-eos: every request generated all its tokens
    code, status = run_playbook(PLAYBOOKS / "status.yml", {"vllm_serve_bench_results_dir": str(tmp_path)})
    assert code == 0, status[-3000:]
    assert f"Last benchmark: {result['date']}, tiny-qwen3-moe, 32 tokens in and 8 out a request: FAILED, {below.group(0)}" in status, status[-3000:]
    # The benchmark's 8 requests of 8 tokens are in the server's generation counter.
    generated = int(re.search(r"Metrics: .* and ([0-9]+) generated tokens since start", status).group(1))
    assert generated >= 8 * 8, status[-3000:]
