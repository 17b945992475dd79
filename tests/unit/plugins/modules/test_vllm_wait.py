"""vllm_wait's module front end: options, sources and results (the loop has its own tests)."""

from __future__ import annotations

import json
import os
import time

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_wait

from ..module_utils.corpus import lab_log, lines
from ..module_utils.fake_docker import FakeDocker, bin_paths, stamped
from .module_harness import ModuleFail, run_module

READY_LINES = lines(lab_log("0.32.0-ready-tp1"))


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


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"timeout": 0}, "timeout must be a positive number of seconds (1 or more), not 0"),
        ({"timeout": -5}, "timeout must be a positive number of seconds (1 or more), not -5"),
        ({"stall_timeout": 0}, "stall_timeout must be a positive number of seconds (1 or more), not 0"),
        ({"poll_interval": 0}, "poll_interval must be more than 0 seconds, not 0.0"),
        ({"poll_interval": -1}, "poll_interval must be more than 0 seconds, not -1.0"),
        ({"tail_lines": -3}, "tail_lines must be between 0 and 200, not -3"),
        ({"command_timeout": -1}, "command_timeout must be a positive number of seconds (1 or more), not -1"),
    ],
)
def test_out_of_range_arguments_are_refused_naming_the_range(ready_file, args, message):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": ready_file, **args})
    assert failure.value.result["msg"] == message


def test_a_missing_file_times_out_saying_it_is_missing(tmp_path):
    path = tmp_path / "vllm.log"
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": str(path), "timeout": 1, "poll_interval": 0.2})
    assert failure.value.result["reason"] == "timeout"
    assert failure.value.result["msg"] == f"vLLM did not reach ready within 1 s: {path} does not exist, so there was no log to read."


def test_a_fifo_is_refused_at_once(tmp_path):
    path = tmp_path / "vllm.log"
    os.mkfifo(path)
    started = time.monotonic()
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": str(path), "timeout": 30})
    assert time.monotonic() - started < 5
    assert failure.value.result["msg"] == f"cannot read {path}: it is a FIFO, not a regular file; give the path of vLLM's log file"


def test_a_50_mb_failure_line_is_cut_and_kept_out_of_the_message(tmp_path):
    path = tmp_path / "vllm.log"
    path.write_text("".join(READY_LINES[:5]) + "ValueError: " + "x" * 50_000_000 + "\n", encoding="utf-8")
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"path": str(path), "timeout": 30, "poll_interval": 0.1})
    result = failure.value.result
    assert result["reason"] == "other_error"
    assert len(json.dumps(result)) < 300_000
    assert len(result["msg"]) < 2_000
    assert [line for line in result["tail"] if line.startswith("ValueError")] == [result["vllm_log"]["error"]["line"]]


def test_a_container_that_exited_before_ready(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams(stamped(READY_LINES[:20]))
    docker.status("exited 137")
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"container": "vllm", "timeout": 5, "poll_interval": 0.01}, bin_paths=bin_paths(docker))
    assert failure.value.result["reason"] == "exited"
    assert "exited (exit code 137)" in failure.value.result["msg"]


def test_a_ready_container_with_a_byte_that_is_not_utf8(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams(stamped(READY_LINES).encode() + b"2026-12-02T16:00:00.000000000Z \xff\xfe\n")
    result = run_module(vllm_wait.main, {"container": "vllm", "timeout": 5}, bin_paths=bin_paths(docker))
    assert result["vllm_log"]["outcome"] == "ready"
    assert result["tail"][-1] == "2026-12-02T16:00:00.000000000Z \ufffd\ufffd"
    json.dumps(result, ensure_ascii=False).encode("utf-8")


def test_a_docker_that_does_not_answer_fails_naming_the_command(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.hang()
    started = time.monotonic()
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_wait.main, {"container": "vllm", "timeout": 600, "command_timeout": 1}, bin_paths=bin_paths(docker))
    assert time.monotonic() - started < 10
    assert failure.value.result["msg"] == f"`{docker.path} logs --timestamps vllm` did not finish within 1 s and was stopped"


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
    asked = []

    def answer(url, **kwargs):
        asked.append((url, kwargs["ca_path"], kwargs["headers"]))
        return Answer(next(codes))

    monkeypatch.setattr(vllm_wait, "open_url", answer)
    assert vllm_wait.api_probe("https://127.0.0.1:8000/", "secret", True, "/etc/ca.pem")() == (False, "/v1/models answered 503")
    assert asked == [
        ("https://127.0.0.1:8000/health", "/etc/ca.pem", {"Authorization": "Bearer secret"}),
        ("https://127.0.0.1:8000/v1/models", "/etc/ca.pem", {"Authorization": "Bearer secret"}),
    ]

    def refused(url, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr(vllm_wait, "open_url", refused)
    assert vllm_wait.api_probe("http://127.0.0.1:8000", None, True, None)() == (False, "/health: connection refused")
