"""vllm_log_info on real lab logs: from a file, from a string, from a container's log."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_log_info

from ..module_utils.corpus import lab_log, lines
from .module_harness import FakeCommands, ModuleFail, run_module

READY_LINES = lines(lab_log("0.32.0-ready-tp1"))
REFUSED_LINES = lines(lab_log("0.32.0-unsupported-architecture"))


@pytest.mark.parametrize("check_mode", [False, True])
def test_reads_a_file(check_mode, ready_file):
    result = run_module(vllm_log_info.main, {"path": ready_file, "_ansible_check_mode": check_mode})
    assert result["changed"] is False
    assert result["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert result["vllm_log"]["outcome"] == "ready"
    assert result["lines"] == len([line.rstrip("\n") for line in READY_LINES])
    assert result["tail"] == [line.rstrip("\n") for line in READY_LINES][-20:]


def test_reads_content_with_a_shorter_tail():
    result = run_module(vllm_log_info.main, {"content": "".join(REFUSED_LINES), "tail_lines": 3})
    assert result["vllm_log"]["outcome"] == "unsupported_architecture"
    assert len(result["tail"]) == 3


def test_reads_a_container_log_in_time_order():
    stdout = "".join(f"2026-12-02T15:00:{n:02d}.000000000Z {line}" for n, line in enumerate(READY_LINES[:30]))
    commands = FakeCommands({("/usr/bin/docker", "logs", "--timestamps", "vllm"): (0, stdout, "")})
    result = run_module(vllm_log_info.main, {"container": "vllm"}, commands)
    assert result["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert result["vllm_log"]["outcome"] == "loading"


def test_missing_container_fails_with_docker_message():
    commands = FakeCommands({("/usr/bin/docker", "logs", "--timestamps", "vllm"): (1, "", "Error response from daemon: No such container: vllm")})
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"container": "vllm"}, commands)
    assert failure.value.result["msg"] == "docker logs vllm failed (rc=1): Error response from daemon: No such container: vllm"


def test_unreadable_path_fails_naming_it(tmp_path):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": str(tmp_path)})
    assert failure.value.result["msg"].startswith(f"cannot read {tmp_path}:")


def test_exactly_one_source(ready_file):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": ready_file, "content": "x"})
    assert "mutually exclusive" in failure.value.result["msg"]
