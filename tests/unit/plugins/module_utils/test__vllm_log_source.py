"""Log sources: a file read as it grows, and a container's log through a real (stand-in) docker process."""

from __future__ import annotations

import gzip
import os
import re
import time
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _vllm_log_source
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log_source import (
    MAX_LINE_CHARS,
    MAX_READ_CHARS,
    ContainerLog,
    DockerCommands,
    FileLog,
    LogSourceError,
    argument_problem,
)

from .corpus import lab_log, lines
from .fake_docker import SH, TIMEOUT, FakeDocker, run_command, running

READY = lines(lab_log("0.32.0-ready-tp1"))
NOT_REGULAR = "not a regular file; give the path of vLLM's log file"


def read_all(log: FileLog | ContainerLog) -> list[str]:
    """read_new() until the backlog is drained."""
    seen = log.read_new()
    while log.backlog():
        seen += log.read_new()
    return seen


def test_file_log_returns_only_complete_new_lines(tmp_path):
    path = tmp_path / "vllm.log"
    log = FileLog(str(path))
    assert log.read_new() == []  # not written yet: vLLM has not started
    assert log.missing() == f"{path} does not exist"
    path.write_text(READY[0] + READY[1][:10], encoding="utf-8")
    assert log.read_new() == [READY[0].rstrip("\n")]
    assert log.missing() is None
    with path.open("a", encoding="utf-8") as handle:
        handle.write(READY[1][10:] + READY[2])
    assert log.read_new() == [READY[1].rstrip("\n"), READY[2].rstrip("\n")]
    assert log.state() is None
    assert not log.backlog()


def test_file_log_reads_text_as_text_files_do(tmp_path):
    path = tmp_path / "vllm.log"
    path.write_bytes(b"crlf\r\nprogress 1%\rprogress 100%\ncaf\xe9\nend")
    assert FileLog(str(path)).read_new() == ["crlf", "progress 1%", "progress 100%", "caf\ufffd"]
    assert list(FileLog(str(path)).stream()) == ["crlf", "progress 1%", "progress 100%", "caf\ufffd", "end"]


def test_file_log_that_is_a_directory_is_an_error(tmp_path):
    with pytest.raises(LogSourceError, match=re.escape(f"cannot read {tmp_path}: it is a directory, {NOT_REGULAR}")):
        FileLog(str(tmp_path)).read_new()


@pytest.mark.parametrize("read", [FileLog.read_new, lambda log: next(log.stream())])
def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path, read):
    path = tmp_path / "vllm.log"
    os.mkfifo(path)
    with pytest.raises(LogSourceError, match=re.escape(f"cannot read {path}: it is a FIFO, {NOT_REGULAR}")):
        read(FileLog(str(path)))


@pytest.mark.parametrize("read", [FileLog.read_new, lambda log: next(log.stream())])
def test_a_device_that_never_ends_is_refused(read):
    with pytest.raises(LogSourceError, match=re.escape(f"cannot read /dev/zero: it is a character device, {NOT_REGULAR}")):
        read(FileLog("/dev/zero"))


def test_a_file_that_does_not_exist_cannot_be_streamed(tmp_path):
    with pytest.raises(LogSourceError, match=r"vllm\.log: it does not exist$"):
        next(FileLog(str(tmp_path / "vllm.log")).stream())


def test_a_file_is_read_a_bounded_amount_at_a_time_without_loss_or_repeat(tmp_path):
    path = tmp_path / "vllm.log"
    written = [f"INFO line {n:08d} " + "x" * 90 for n in range(3 * MAX_READ_CHARS // 100)]
    path.write_text("".join(line + "\n" for line in written), encoding="utf-8")
    log = FileLog(str(path))
    first = log.read_new()
    assert sum(map(len, first)) <= MAX_READ_CHARS
    assert log.backlog()
    assert first + read_all(log) == written
    assert not log.backlog()


def test_a_50_mb_line_is_returned_once_cut_however_it_arrives(tmp_path):
    path = tmp_path / "vllm.log"
    log = FileLog(str(path))
    path.write_text("before\n" + "x" * 30_000_000, encoding="utf-8")
    seen = read_all(log)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("y" * 20_000_000)
    seen += read_all(log)
    with path.open("a", encoding="utf-8") as handle:
        handle.write("\nafter\n")
    seen += read_all(log)
    cut = "x" * MAX_LINE_CHARS + f" [... {50_000_000 - MAX_LINE_CHARS} more characters left out]"
    assert seen == ["before", cut, "after"]
    assert list(FileLog(str(path)).stream()) == ["before", cut, "after"]


def commands(docker: FakeDocker, tmp_path: Path, seconds: int = 30) -> DockerCommands:
    return DockerCommands(run_command, docker=str(docker.path), timeout=TIMEOUT, shell=SH, seconds=seconds, workdir=str(tmp_path))


def test_container_log_follows_and_reports_state(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams("2026-12-02T15:00:01.000000000Z b\n", "2026-12-02T15:00:00.000000000Z a\n")
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    assert log.read_new() == ["2026-12-02T15:00:00.000000000Z a", "2026-12-02T15:00:01.000000000Z b"]
    assert log.read_new() == []
    assert log.state() == {"status": "running", "exit_code": 0}
    # The second read asks only for the second before the newest line seen.
    assert [call["args"] for call in docker.calls()] == [
        ["logs", "--timestamps", "vllm"],
        ["logs", "--timestamps", "--since", "1796223600.000000000", "--tail", "2000", "vllm"],
        ["inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", "vllm"],
    ]
    assert sorted(os.listdir(tmp_path)) == ["docker", "docker-state"]  # docker's output files are gone


def test_container_that_docker_cannot_inspect(tmp_path):
    docker = FakeDocker(tmp_path)
    (docker.state / "status").unlink()
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    with pytest.raises(LogSourceError, match=r"^`\S+/docker inspect --format \{\{.State.Status\}\} \{\{.State.ExitCode\}\} vllm` failed \(rc=1\): "):
        log.state()


def test_container_log_that_docker_refuses(tmp_path):
    docker = FakeDocker(tmp_path)
    refusal = "Error response from daemon: configured logging driver does not support reading"
    docker.fail(1, refusal + "\n")
    with pytest.raises(LogSourceError) as failure:
        ContainerLog(commands(docker, tmp_path), "vllm").read_new()
    assert str(failure.value) == f"`{docker.path} logs --timestamps vllm` failed (rc=1): {refusal}"


def test_a_docker_that_does_not_answer_is_stopped_and_named(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.hang()
    started = time.monotonic()
    with pytest.raises(LogSourceError) as failure:
        ContainerLog(commands(docker, tmp_path, seconds=1), "vllm").read_new()
    assert time.monotonic() - started < 10
    assert str(failure.value) == f"`{docker.path} logs --timestamps vllm` did not finish within 1 s and was stopped"
    # timeout(1) stopped docker itself, not only the shell around it: nothing is left running.
    assert not running(docker.pid())


def test_a_byte_that_is_not_utf8_is_replaced(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams(b"2026-12-02T15:00:00.000000000Z caf\xe9\n", b"2026-12-02T15:00:01.000000000Z \xff\n")
    assert list(ContainerLog(commands(docker, tmp_path), "vllm").stream()) == [
        "2026-12-02T15:00:00.000000000Z caf\ufffd",
        "2026-12-02T15:00:01.000000000Z \ufffd",
    ]


def test_a_long_container_line_is_cut(tmp_path):
    docker = FakeDocker(tmp_path)
    docker.streams("2026-12-02T15:00:00.000000000Z " + "x" * 200_000 + "\n2026-12-02T15:00:01.000000000Z next\n")
    first, second = ContainerLog(commands(docker, tmp_path), "vllm").read_new()
    assert first == ("2026-12-02T15:00:00.000000000Z " + "x" * 200_000)[:MAX_LINE_CHARS] + f" [... {200_031 - MAX_LINE_CHARS} more characters left out]"
    assert second == "2026-12-02T15:00:01.000000000Z next"


def test_lines_stamped_alike_at_a_poll_are_neither_lost_nor_repeated(tmp_path):
    docker = FakeDocker(tmp_path)
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    docker.streams("2026-12-02T15:00:00.500000000Z one\n")
    assert log.read_new() == ["2026-12-02T15:00:00.500000000Z one"]
    docker.streams("2026-12-02T15:00:00.500000000Z one\n2026-12-02T15:00:00.500000000Z two\n")
    assert log.read_new() == ["2026-12-02T15:00:00.500000000Z two"]
    assert log.read_new() == []


def test_a_line_written_after_a_newer_one_of_the_other_stream_is_not_lost(tmp_path):
    docker = FakeDocker(tmp_path)
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    docker.streams("2026-12-02T15:00:00.000000000Z out 1\n2026-12-02T15:00:10.900000000Z out 2\n", "2026-12-02T15:00:00.100000000Z err 1\n")
    assert len(log.read_new()) == 3
    # stderr's line was stamped before stdout's last one, but reached the log after the read.
    docker.streams(
        "2026-12-02T15:00:00.000000000Z out 1\n2026-12-02T15:00:10.900000000Z out 2\n",
        "2026-12-02T15:00:00.100000000Z err 1\n2026-12-02T15:00:10.400000000Z err 2\n",
    )
    assert log.read_new() == ["2026-12-02T15:00:10.400000000Z err 2"]


def real_streams() -> tuple[str, str]:
    fixtures = Path(__file__).parent / "fixtures" / "docker_logs"
    out, err = (gzip.decompress((fixtures / f"0.32.0-mp-pp2-rank0.{stream}.txt.gz").read_bytes()).decode() for stream in ("stdout", "stderr"))
    return out, err


def written_by(text: str, cutoff: str) -> str:
    """The part of a stream written up to a time: its lines whose timestamp is not later."""
    return "".join(line + "\n" for line in text.split("\n")[:-1] if line.split(" ", 1)[0] <= cutoff)


def test_container_log_polled_while_vllm_starts_misses_and_repeats_nothing(tmp_path):
    # A real rank-0 start: uvicorn writes stderr, vLLM stdout, the progress bar has carriage returns.
    out, err = real_streams()
    merged = sorted(out.split("\n")[:-1] + err.split("\n")[:-1], key=lambda line: line.split(" ", 1)[0])
    cutoffs = [line.split(" ", 1)[0] for line in merged[:: max(1, len(merged) // 7)]] + ["9999"]
    docker = FakeDocker(tmp_path)
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    seen = []
    for cutoff in cutoffs:
        docker.streams(written_by(out, cutoff), written_by(err, cutoff))
        seen += log.read_new()
    assert seen == merged
    assert seen[-1].endswith("INFO:     Application startup complete.")
    progress = [line for line in seen if "Loading safetensors checkpoint shards" in line]
    assert progress and all("\r" in line and line[:4] == "2026" for line in progress)
    # Each poll got what was new and the second before it (several polls fall in vLLM's last
    # second here), not the whole log again: that would be 5.5 times the log.
    assert sum(call["bytes"] for call in docker.calls()) < 2.5 * (len(out) + len(err))


def test_a_big_container_log_is_returned_a_bounded_amount_at_a_time(tmp_path):
    docker = FakeDocker(tmp_path)
    written = [f"2026-12-02T15:00:{n // 100_000:02d}.{n % 100_000:09d}Z line {n:08d} " + "x" * 60 for n in range(2 * MAX_READ_CHARS // 100)]
    docker.streams("".join(line + "\n" for line in written))
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    first = log.read_new()
    assert sum(map(len, first)) < MAX_READ_CHARS + 200
    assert log.backlog()
    assert first + read_all(log) == written
    assert len(docker.calls()) == 1


@pytest.mark.parametrize(
    ("params", "problem"),
    [
        ({"tail_lines": 0, "command_timeout": 1}, None),
        ({"tail_lines": 200, "command_timeout": 300}, None),
        ({"tail_lines": -1, "command_timeout": 300}, "tail_lines must be between 0 and 200, not -1"),
        ({"tail_lines": 20, "command_timeout": 0}, "command_timeout must be a positive number of seconds (1 or more), not 0"),
    ],
)
def test_argument_problem(params, problem):
    assert argument_problem(params) == problem


def test_a_poll_reads_a_window_of_the_log_and_all_of_it_only_when_the_window_fills(tmp_path, monkeypatch):
    # A window of four: the lines of the last second before the newest seen are asked again too.
    monkeypatch.setattr(_vllm_log_source, "POLL_WINDOW_LINES", 4)
    docker = FakeDocker(tmp_path)
    log = ContainerLog(commands(docker, tmp_path), "vllm")
    written = [f"2026-12-02T15:00:0{n}.000000000Z line {n}" for n in range(8)]
    docker.streams("".join(line + "\n" for line in written[:2]))
    assert log.read_new() == written[:2]
    docker.streams("".join(line + "\n" for line in written[:3]))
    assert log.read_new() == written[2:3]  # the window held everything new
    docker.streams("".join(line + "\n" for line in written))
    assert log.read_new() == written[3:]  # five new lines fill the window: read again without it
    polls = [call["args"] for call in docker.calls()][1:]
    assert [("--tail" in args, "--since" in args) for args in polls] == [(True, True), (True, True), (False, True)]
