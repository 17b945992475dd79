"""vllm_log_info on real lab logs: from a file, from a string, from a container's log."""

from __future__ import annotations

import json
import os
import time
import tracemalloc

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_log_info

from ..module_utils.corpus import lab_log, lines
from ..module_utils.fake_docker import FakeDocker, bin_paths, stamped
from .module_harness import ModuleFail, run_module

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


def test_reads_a_container_log_in_time_order(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams(stamped(READY_LINES[:30]))
    result = run_module(vllm_log_info.main, {"container": "vllm"}, bin_paths=bin_paths(docker))
    assert result["vllm_log"]["architecture"] == "Qwen3MoeForCausalLM"
    assert result["vllm_log"]["outcome"] == "loading"
    assert result["lines"] == 30


def test_missing_container_fails_with_docker_message(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.fail(1, "Error response from daemon: No such container: vllm\n")
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"container": "vllm"}, bin_paths=bin_paths(docker))
    assert failure.value.result["msg"] == f"`{docker.path} logs --timestamps vllm` failed (rc=1): Error response from daemon: No such container: vllm"


def test_a_docker_that_does_not_answer_fails_naming_the_command(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.hang()
    started = time.monotonic()
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"container": "vllm", "command_timeout": 1}, bin_paths=bin_paths(docker))
    assert time.monotonic() - started < 10
    assert failure.value.result["msg"] == f"`{docker.path} logs --timestamps vllm` did not finish within 1 s and was stopped"


def test_a_byte_that_is_not_utf8_in_a_container_log_is_replaced(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams(stamped(READY_LINES[:5]).encode() + b"2026-12-02T15:01:00.000000000Z caf\xe9 \xff\n")
    result = run_module(vllm_log_info.main, {"container": "vllm"}, bin_paths=bin_paths(docker))
    assert result["tail"][-1] == "2026-12-02T15:01:00.000000000Z caf\ufffd \ufffd"
    # What Ansible does with a module's result: a lone surrogate here is a serialization error.
    json.dumps(result, ensure_ascii=False).encode("utf-8")


def test_a_big_container_log_is_never_held_whole(tmp_path):
    docker = FakeDocker(tmp_path)
    log = stamped(READY_LINES) * 500
    docker.streams(log)
    tracemalloc.start()
    try:
        result = run_module(vllm_log_info.main, {"container": "vllm"}, bin_paths=bin_paths(docker))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result["lines"] == 500 * len(READY_LINES)
    assert len(log) > 10_000_000
    assert peak < 5_000_000


def test_a_50_mb_line_is_returned_cut_not_whole_in_every_field(tmp_path):
    path = tmp_path / "vllm.log"
    path.write_text("".join(READY_LINES[:5]) + "ValueError: " + "x" * 50_000_000 + "\n", encoding="utf-8")
    result = run_module(vllm_log_info.main, {"path": str(path)})
    assert len(json.dumps(result)) < 300_000
    assert result["tail"][-1].startswith("ValueError: xxx")
    assert len(result["tail"][-1]) < 70_000
    assert result["tail"][-1].endswith(f" [... {50_000_012 - 65_536} more characters left out]")
    assert result["vllm_log"]["error"]["line"] == result["tail"][-1]


@pytest.mark.parametrize(("make", "kind"), [(os.mkfifo, "a FIFO"), (os.mkdir, "a directory")])
def test_a_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path, make, kind):
    path = tmp_path / "vllm.log"
    make(path)
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": str(path)})
    assert failure.value.result["msg"] == f"cannot read {path}: it is {kind}, not a regular file; give the path of vLLM's log file"


def test_a_missing_file_fails_naming_it(tmp_path):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": str(tmp_path / "vllm.log")})
    assert failure.value.result["msg"] == f"cannot read {tmp_path / 'vllm.log'}: it does not exist"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"tail_lines": -1}, "tail_lines must be between 0 and 200, not -1"),
        ({"tail_lines": 201}, "tail_lines must be between 0 and 200, not 201"),
        ({"command_timeout": 0}, "command_timeout must be a positive number of seconds (1 or more), not 0"),
    ],
)
def test_out_of_range_arguments_are_refused(ready_file, args, message):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": ready_file, **args})
    assert failure.value.result["msg"] == message


def test_exactly_one_source(ready_file):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_log_info.main, {"path": ready_file, "content": "x"})
    assert "mutually exclusive" in failure.value.result["msg"]
