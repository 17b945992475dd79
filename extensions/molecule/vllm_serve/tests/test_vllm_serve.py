"""Verify vllm_serve on two lab nodes: one API across both ranks, gated, keyed, on the fabric only."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import CONVERGE, run_playbook, run_role

SCENARIO = "vllm_serve"
HEAD_IP = "192.168.182.11"
ENDPOINT = f"http://{HEAD_IP}:8000"
CONTAINER = "sparkinfer-vllm"
KEY_FILE = Path.home() / ".config" / "sparkinfer" / "serve-spark-1-vllm-api-key"


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={os.environ['MOLECULE_INVENTORY_FILE']}", sudo=True)


def http_status(host, path: str, key: str | None) -> tuple[int, str]:
    """The status and body of GET path on the endpoint, asked from a node with Python's urllib."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    script = (
        "import json, sys, urllib.request, urllib.error\n"
        f"request = urllib.request.Request({ENDPOINT + path!r}, headers={headers!r})\n"
        "try:\n"
        "    response = urllib.request.urlopen(request, timeout=30)\n"
        "    print(response.status); print(response.read().decode())\n"
        "except urllib.error.HTTPError as exc:\n"
        "    print(exc.code); print(exc.read().decode())\n"
    )
    out = host.check_output(f"python3 -c {shlex.quote(script)}")
    status, body = out.split("\n", 1)
    return int(status), body


def container_args(host) -> list[str]:
    return json.loads(host.check_output(f"docker inspect --format '{{{{json .Args}}}}' {CONTAINER}"))


def test_the_api_lists_the_served_model_with_the_kept_key_and_refuses_without_it():
    key = KEY_FILE.read_text(encoding="utf-8").split()[0]
    assert len(key) == 40
    status, body = http_status(node("serve-spark-2"), "/v1/models", key)
    assert status == 200, body
    assert [model["id"] for model in json.loads(body)["data"]] == ["tiny-qwen3-moe"]
    assert http_status(node("serve-spark-2"), "/v1/models", None)[0] == 401


def test_both_ranks_run_identical_serve_flags_and_differ_only_in_rank():
    head, follower = container_args(node("serve-spark-1")), container_args(node("serve-spark-2"))
    rank_tail = ["--nnodes", "2", "--node-rank"]
    split_head, split_follower = head.index("--nnodes"), follower.index("--nnodes")
    assert head[:split_head] == follower[:split_follower]
    assert head[split_head:] == [*rank_tail, "0", "--master-addr", HEAD_IP, "--master-port", "29501"]
    assert follower[split_follower:] == [*rank_tail, "1", "--master-addr", HEAD_IP, "--master-port", "29501", "--headless"]
    assert "--pipeline-parallel-size" in head and head[head.index("--pipeline-parallel-size") + 1] == "2"
    assert not [arg for arg in head + follower if "api" in arg.lower() and "key" in arg.lower()]


def test_the_api_listens_on_the_fabric_address_only():
    listening = node("serve-spark-1").check_output("ss -Hltn")
    sockets = [line.split()[3] for line in listening.splitlines()]
    assert f"{HEAD_IP}:8000" in sockets
    assert not [socket for socket in sockets if socket.endswith(":8000") and socket != f"{HEAD_IP}:8000"]


def test_the_head_records_the_gated_launch_for_status():
    record = json.loads(node("serve-spark-1").file(f"/etc/sparkinfer/{CONTAINER}.json").content_string)
    assert record["endpoint"] == f"{ENDPOINT}/v1"
    assert record["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert record["vllm_log"]["pipeline_parallel_size"] == 2
    assert record["vllm_log"]["outcome"] == "ready"
    assert 0 < record["stage_seconds"]["architecture_resolved"] < record["stage_seconds"]["ready"]


def test_the_rank_environment_file_holds_the_key_for_root_only():
    env_file = node("serve-spark-1").file(f"/etc/sparkinfer/{CONTAINER}.env")
    assert env_file.mode == 0o600
    assert env_file.user == "root"
    assert "VLLM_API_KEY=" in env_file.content_string
    assert "NCCL_SOCKET_IFNAME=eth0" in env_file.content_string
    assert "VLLM_API_KEY=" not in node("serve-spark-2").file(f"/etc/sparkinfer/{CONTAINER}.env").content_string


def single_node_override(**extra):
    """Another server on the head alone, beside the converged one: its own container, port and master port."""
    return {
        "vllm_serve_hosts": ["serve-spark-1"],
        "vllm_serve_pipeline_parallel_size": 1,
        "vllm_serve_container_name": "sparkinfer-vllm-drill",
        "vllm_serve_port": 8011,
        "vllm_serve_master_port": 29511,
        **extra,
    }


@pytest.fixture
def drill_container():
    yield "sparkinfer-vllm-drill"
    node("serve-spark-1").run("docker rm -f sparkinfer-vllm-drill; rm -f /etc/sparkinfer/sparkinfer-vllm-drill.*")


@pytest.mark.parametrize(
    ("override", "message", "launched", "seconds"),
    [
        (
            {"vllm_serve_expect": {"architecture": "Qwen3_5MoeForConditionalGeneration"}},
            "the log says architecture='Qwen3MoeForCausalLM', the gate expects architecture='Qwen3_5MoeForConditionalGeneration'",
            True,
            240,
        ),
        (
            {"vllm_serve_executor": "ray", "vllm_serve_ray_address": f"{HEAD_IP}:6379"},
            f"No Ray GCS answers at {HEAD_IP}:6379 (vllm_serve_ray_address)",
            False,
            120,
        ),
        ({"vllm_serve_memory_reserve_gib": 4096}, "The memory plan refuses this launch", False, 120),
        ({"vllm_serve_executor": "slurm"}, "vllm_serve_executor must be one of: mp, ray", False, 120),
    ],
    ids=["wrong-architecture", "ray-executor-without-ray", "memory-plan", "bad-executor"],
)
def test_the_role_refuses_what_cannot_serve_and_says_why(drill_container, override, message, launched, seconds):
    head = node("serve-spark-1")
    start = time.monotonic()
    code, output = run_role(SCENARIO, single_node_override(**override))
    elapsed = time.monotonic() - start
    assert code == 2, output[-3000:]
    assert message in output, output[-3000:]
    assert elapsed < seconds, f"took {elapsed:.0f} s"
    assert head.run(f"docker inspect {drill_container}").rc == (0 if launched else 1)
    if launched:
        # A failed gate stops its ranks (on a Spark the rank would go on loading weights) and keeps their logs.
        assert head.check_output(f"docker inspect --format '{{{{.State.Status}}}}' {drill_container}") == "exited"
        assert "The rank on serve-spark-1 was stopped" in output, output[-3000:]
        assert "Resolved architecture" in head.check_output(f"docker logs {drill_container} 2>&1")
    # The converged server is untouched.
    assert head.check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"


def test_check_mode_makes_no_api_key_file_on_the_admin_box(tmp_path):
    key_file = tmp_path / "serve-spark-1-vllm-api-key"
    code, output = run_playbook(CONVERGE, {"vllm_serve_api_key_file": str(key_file)}, scenario=SCENARIO, options=("--check",))
    assert code == 0, output[-3000:]
    assert not key_file.exists()
    # The converged server is untouched.
    assert node("serve-spark-1").check_output(f"docker inspect --format '{{{{.State.Running}}}}' {CONTAINER}") == "true"
