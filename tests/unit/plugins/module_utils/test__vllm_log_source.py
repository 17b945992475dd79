"""Log sources: a file read as it grows, and a container's log through docker."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log_source import (
    ContainerLog,
    FileLog,
    LogSourceError,
)

from .corpus import lab_log, lines

READY = lines(lab_log("0.32.0-ready-tp1"))


def test_file_log_returns_only_complete_new_lines(tmp_path):
    path = tmp_path / "vllm.log"
    log = FileLog(str(path))
    assert log.read_new() == []  # not written yet: vLLM has not started
    path.write_text(READY[0] + READY[1][:10], encoding="utf-8")
    assert log.read_new() == [READY[0].rstrip("\n")]
    with path.open("a", encoding="utf-8") as handle:
        handle.write(READY[1][10:] + READY[2])
    assert log.read_new() == [READY[1].rstrip("\n"), READY[2].rstrip("\n")]
    assert log.state() is None


def test_file_log_that_is_a_directory_is_an_error(tmp_path):
    with pytest.raises(LogSourceError, match=f"cannot read {tmp_path}"):
        FileLog(str(tmp_path)).read_new()


def test_container_log_follows_and_reports_state():
    answers = {
        ("docker", "logs", "--timestamps", "vllm"): [(0, "2026-12-02T15:00:01.0Z b\n", "2026-12-02T15:00:00.0Z a\n")],
        ("docker", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", "vllm"): [(0, "running 0\n", "")],
    }

    def run(argv):
        return answers[tuple(argv)][0]

    log = ContainerLog(run, "docker", "vllm")
    assert log.read_new() == ["2026-12-02T15:00:00.0Z a", "2026-12-02T15:00:01.0Z b"]
    assert log.read_new() == []
    assert log.state() == {"status": "running", "exit_code": 0}


def test_container_that_docker_cannot_inspect():
    log = ContainerLog(lambda argv: (1, "", "Error: No such object: vllm"), "docker", "vllm")
    with pytest.raises(LogSourceError, match="docker inspect vllm failed \\(rc=1\\): Error: No such object: vllm"):
        log.state()


def real_streams() -> tuple[str, str]:
    fixtures = Path(__file__).parent / "fixtures" / "docker_logs"
    out, err = (gzip.decompress((fixtures / f"0.32.0-mp-pp2-rank0.{stream}.txt.gz").read_bytes()).decode() for stream in ("stdout", "stderr"))
    return out, err


def written_by(text: str, cutoff: str) -> str:
    """The part of a stream written up to a time: its lines whose timestamp is not later."""
    return "".join(line + "\n" for line in text.split("\n")[:-1] if line.split(" ", 1)[0] <= cutoff)


def test_container_log_polled_while_vllm_starts_misses_and_repeats_nothing():
    # A real rank-0 start: uvicorn writes stderr, vLLM stdout, the progress bar has carriage returns.
    out, err = real_streams()
    merged = sorted(out.split("\n")[:-1] + err.split("\n")[:-1], key=lambda line: line.split(" ", 1)[0])
    cutoffs = [line.split(" ", 1)[0] for line in merged[:: max(1, len(merged) // 7)]] + ["9999"]
    polls = iter([(0, written_by(out, cutoff), written_by(err, cutoff)) for cutoff in cutoffs])
    log = ContainerLog(lambda argv: next(polls), "docker", "vllm")
    seen = [line for _poll in cutoffs for line in log.read_new()]
    assert seen == merged
    assert seen[-1].endswith("INFO:     Application startup complete.")
    progress = [line for line in seen if "Loading safetensors checkpoint shards" in line]
    assert progress and all("\r" in line and line[:4] == "2026" for line in progress)
