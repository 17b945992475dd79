"""vllm_wait and vllm_log_info against a real vLLM server (CPU build, tiny generated Qwen3-MoE).

Runs the modules exactly as users and outside acceptance tests do: `ansible localhost -m
sparkinfer.cluster.<module> -a ...` with the collection on ANSIBLE_COLLECTIONS_PATH. The server is
the lab vLLM image (SPARKINFER_LAB_VLLM_IMAGE) on this host's Docker engine, on the host's network but
listening on 127.0.0.1 only; its log is what `docker run` prints. The model is the tiny one
lab/tiny-model/generate.sh makes (SPARKINFER_TINY_MODEL); `make integration` sets both.
"""

from __future__ import annotations

import calendar
import json
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IMAGE = os.environ.get("SPARKINFER_LAB_VLLM_IMAGE", "sparkinfer-lab-vllm:latest")
CACHE = Path(os.environ.get("SPARKINFER_CACHE", "/var/cache/sparkinfer"))
GATE_SECONDS = 10  # a wrong architecture must fail this soon after vLLM resolves it


@pytest.fixture(scope="module")
def tiny_model() -> Path:
    model = Path(os.environ.get("SPARKINFER_TINY_MODEL", ""))
    assert (model / "config.json").is_file(), f"SPARKINFER_TINY_MODEL={model!s} holds no model: run lab/tiny-model/generate.sh"
    return model


def free_loopback_port() -> int:
    """A port nothing listens on now: a fixed one may still be held by a server of a run cut short."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Server:
    name: str
    client: subprocess.Popen


def start_server(model: Path, log: Path, port: int) -> Server:
    # The compile cache is kept per machine, as a Spark keeps it (vllm_serve mounts it), so that a warm
    # run does not recompile.
    cache = CACHE / "integration-vllm-cache"
    cache.mkdir(parents=True, exist_ok=True)
    name = f"sparkinfer-integration-{uuid.uuid4().hex[:8]}"
    with log.open("w") as out:
        client = subprocess.Popen(
            ["docker", "run", "--rm", "--name", name, "--network", "host", "--shm-size", "1g",
             "-e", "VLLM_CPU_KVCACHE_SPACE=1", "-e", "HF_HUB_OFFLINE=1", "-e", "VLLM_NO_USAGE_STATS=1",
             "-v", f"{model}:/models/tiny:ro", "-v", f"{cache}:/root/.cache/vllm", IMAGE,
             "/models/tiny", "--served-model-name", "tiny", "--max-model-len", "512", "--host", "127.0.0.1", "--port", str(port)],
            stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    return Server(name, client)


def stop_server(server: Server) -> None:
    # Killed, not stopped: the tests need only its log, and vLLM ignores SIGTERM until its engine is up.
    subprocess.run(["docker", "rm", "--force", server.name], capture_output=True, check=False, timeout=60)
    server.client.wait(timeout=30)


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
    # The container has no time zone: vLLM's clock prints UTC.
    printed = calendar.timegm(time.strptime(f"{time.gmtime().tm_year}-{resolved.group(1)}", "%Y-%m-%d %H:%M:%S"))
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
