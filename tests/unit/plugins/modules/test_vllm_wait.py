"""vllm_wait's module front end: options, sources and results (the loop has its own tests)."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_wait

from ..module_utils.corpus import lab_log, lines
from .module_harness import FakeCommands, ModuleFail, run_module

READY_LINES = lines(lab_log("0.32.0-ready-tp1"))
DOCKER_LOGS = ("/usr/bin/docker", "logs", "--timestamps", "vllm")
DOCKER_STATE = ("/usr/bin/docker", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", "vllm")


def test_a_ready_file_passes_the_gate(ready_file):
    result = run_module(vllm_wait.main, {"path": ready_file, "expect": {"architecture": "Qwen3MoeForCausalLM", "quantization": None}, "timeout": 5})
    assert result["reason"] is None
    assert result["vllm_log"]["outcome"] == "ready"
    assert set(result["stage_seconds"]) >= {"starting", "architecture_resolved", "ready"}


def test_gate_mismatch_fails_with_the_facts(ready_file):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": ready_file, "expect": {"architecture": "Qwen3_5MoeForConditionalGeneration"}})
    result = failure.value.result
    assert result["reason"] == "gate"
    assert result["msg"].startswith("vLLM gate: the log says architecture='Qwen3MoeForCausalLM'")
    assert result["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"


def test_unknown_expect_key_is_refused_naming_the_allowed_ones(ready_file):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": ready_file, "expect": {"model": "x"}})
    assert failure.value.result["msg"].startswith("expect has unknown key(s) model; allowed: architecture, quantization")


def test_a_container_that_exited_before_ready():
    stdout = "".join(f"2026-12-02T15:00:{n:02d}.000000000Z {line}" for n, line in enumerate(READY_LINES[:20]))
    commands = FakeCommands({DOCKER_LOGS: (0, stdout, ""), DOCKER_STATE: (0, "exited 137\n", "")})
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"container": "vllm", "timeout": 5, "poll_interval": 0.01}, commands)
    assert failure.value.result["reason"] == "exited"
    assert "exited (exit code 137)" in failure.value.result["msg"]


def test_check_mode_waits_the_same_way(ready_file):
    result = run_module(vllm_wait.main, {"path": ready_file, "timeout": 5, "_ansible_check_mode": True})
    assert result["changed"] is False
    assert result["vllm_log"]["stage"] == "ready"


def test_api_probe_reports_what_answered(monkeypatch):
    class Answer:
        def __init__(self, code):
            self.code = code

        def getcode(self):
            return self.code

    codes = iter([200, 503])
    monkeypatch.setattr(vllm_wait, "open_url", lambda url, **kwargs: Answer(next(codes)))
    assert vllm_wait.api_probe("http://127.0.0.1:8000/", "secret", True)() == (False, "/v1/models answered 503")

    def refused(url, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(vllm_wait, "open_url", refused)
    assert vllm_wait.api_probe("http://127.0.0.1:8000", None, True)() == (False, "/health: connection refused")
