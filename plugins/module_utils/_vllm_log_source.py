# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Where the vLLM modules read a log from: a file, or a Docker container's log.

Neither is ever held whole: lines are read in pieces of bounded size, a line longer than
MAX_LINE_CHARS keeps only its start, and read_new() returns about MAX_READ_CHARS at most
(backlog() then says that more is already waiting). Bytes that are not UTF-8 are replaced.
"""

from __future__ import annotations

import heapq
import os
import re
import stat
import tempfile
import time
from calendar import timegm
from collections import deque
from typing import IO, Any, Callable, Iterator

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import run_bounded, timeout_message

MAX_TAIL_LINES = 200
MAX_LINE_CHARS = 64 * 1024
MAX_READ_CHARS = 4 * 1024 * 1024
# What a stream() reads at a time: small, since the lines are passed on at once.
_STREAM_CHARS = 256 * 1024
# docker logs is asked again from this long before the newest line seen: a line of the other
# stream stamped just before that one can be written to the log just after it.
SINCE_MARGIN_NS = 10**9
# At each poll docker logs is asked for at most this many of the log's last lines (and again for all
# lines since the newest seen only when they fill the window): with --since alone the daemon reads
# the whole log at every poll (bench/vllm_wait_poll.py, a log of 200,000 lines: 452 ms of its CPU
# per poll that finds nothing new; 8 ms with the window).
POLL_WINDOW_LINES = 2000
# Runs a command's argv under sh with its stdout and stderr sent to the two files named first.
_REDIRECTED = 'out=$1 err=$2; shift 2; exec "$@" >"$out" 2>"$err"'
_DOCKER_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?Z\Z")


class LogSourceError(Exception):
    """The log could not be read; the message says which and why."""


def seconds_problem(name: str, value: int) -> str | None:
    """Why an option counting whole seconds is out of range, or None."""
    return None if value >= 1 else f"{name} must be a positive number of seconds (1 or more), not {value}"


def argument_problem(params: dict[str, Any]) -> str | None:
    """Why the log source options of a module (doc fragment _vllm_log_source) are out of range, or None."""
    tail_lines = params["tail_lines"]
    if not 0 <= tail_lines <= MAX_TAIL_LINES:
        return f"tail_lines must be between 0 and {MAX_TAIL_LINES}, not {tail_lines}"
    return seconds_problem("command_timeout", params["command_timeout"])


class _LineCutter:
    """Assembles lines from pieces of text read MAX_LINE_CHARS at a time, so that no line is ever held
    whole: a longer one keeps its start and says how much of it was left out."""

    def __init__(self) -> None:
        self._head = ""
        self._left_out = 0

    def take(self, handle: IO[str], budget: int) -> tuple[list[str], bool]:
        """The lines completed by reading on until the end of handle or about `budget` characters;
        True when it stopped at the budget (more may be waiting)."""
        lines: list[str] = []
        read = 0
        while read < budget:
            chunk = handle.read(MAX_LINE_CHARS)
            if not chunk:
                return lines, False
            read += len(chunk)
            # No piece of a chunk is longer than MAX_LINE_CHARS: only the one continuing the head can be.
            pieces = chunk.split("\n")
            rest = pieces.pop()
            if pieces:
                if self._head or self._left_out:
                    self._keep(pieces[0])
                    pieces[0] = self.unfinished()
                    self._head, self._left_out = "", 0
                lines.extend(pieces)
            self._keep(rest)
        return lines, True

    def unfinished(self) -> str:
        """The line read so far that no newline has ended yet, as it would be returned."""
        if self._left_out:
            return f"{self._head} [... {self._left_out} more characters left out]"
        return self._head

    def _keep(self, piece: str) -> None:
        room = max(0, MAX_LINE_CHARS - len(self._head))
        self._head += piece[:room]
        self._left_out += max(0, len(piece) - room)


def _all_lines(handle: IO[str], with_unfinished: bool) -> Iterator[str]:
    """Every line of handle, each cut to MAX_LINE_CHARS; the last one even without a newline if asked."""
    cutter = _LineCutter()
    more = True
    while more:
        lines, more = cutter.take(handle, _STREAM_CHARS)
        yield from lines
    if with_unfinished and cutter.unfinished():
        yield cutter.unfinished()


def _kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((kind for is_kind, kind in kinds if is_kind(mode)), "a special file")


def _open_regular_file(path: str) -> IO[str]:
    """path opened as text (universal newlines, like any text file); refused at once unless it is a
    regular file: a FIFO would block the read, a device such as /dev/zero never ends."""
    # O_NONBLOCK: opening a FIFO does not wait for a writer; regular files ignore the flag.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise LogSourceError(f"cannot read {path}: it is {_kind(mode)}, not a regular file; give the path of vLLM's log file")
        return open(fd, encoding="utf-8", errors="replace")
    except BaseException:
        os.close(fd)
        raise


class FileLog:
    """A log file read as it grows: each read_new() returns the complete lines added since the last."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._position = 0  # where the next read starts, as the text file's tell() gives it
        self._cutter = _LineCutter()
        self._more = False
        self._missing = False

    def read_new(self) -> list[str]:
        try:
            handle = _open_regular_file(self.path)
        except FileNotFoundError:
            self._missing, self._more = True, False
            return []  # not written yet: vLLM has not started
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc
        self._missing = False
        try:
            with handle:
                handle.seek(self._position)
                lines, self._more = self._cutter.take(handle, MAX_READ_CHARS)
                self._position = handle.tell()
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc
        return lines

    def backlog(self) -> bool:
        return self._more

    def missing(self) -> str | None:
        return f"{self.path} does not exist" if self._missing else None

    def stream(self) -> Iterator[str]:
        try:
            handle = _open_regular_file(self.path)
        except FileNotFoundError as exc:
            raise LogSourceError(f"cannot read {self.path}: it does not exist") from exc
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc
        try:
            with handle:
                yield from _all_lines(handle, with_unfinished=True)
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc

    def state(self) -> dict[str, Any] | None:
        return None


def _timestamp(line: str) -> str:
    """The RFC 3339 timestamp `docker logs --timestamps` puts before each line (fixed width)."""
    return line.split(" ", 1)[0]


def _since_argument(stamp: str) -> str | None:
    """What to give `docker logs --since` for SINCE_MARGIN_NS before a line's timestamp (Unix seconds,
    nine decimals); None when the timestamp is not docker's."""
    match = _DOCKER_STAMP.match(stamp)
    if match is None:
        return None
    seconds = timegm(time.strptime(match.group(1), "%Y-%m-%dT%H:%M:%S"))
    nanoseconds = seconds * 10**9 + int((match.group(2) or "").ljust(9, "0")) - SINCE_MARGIN_NS
    return f"{nanoseconds // 10**9}.{nanoseconds % 10**9:09d}"


def _docker_output(path: str) -> IO[str]:
    """A file docker logs wrote, as text: lines end at newlines only, so a progress bar's carriage
    returns stay inside the one line docker stamped."""
    return open(path, encoding="utf-8", errors="replace", newline="\n")


def _tail_of(path: str, size: int = 4096) -> str:
    """The last non-empty line among a file's last bytes."""
    with open(path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - size))
        lines = handle.read().decode("utf-8", errors="replace").strip().splitlines()
    return lines[-1].strip() if lines else ""


class DockerCommands:
    """The docker commands of a container log source, each run under timeout(1): a daemon that stopped
    answering fails the task naming the command instead of hanging it, and nothing is left running."""

    def __init__(
        self,
        run: Callable[[list[str]], tuple[int, str, str]],
        *,
        docker: str,
        timeout: str,
        shell: str,
        seconds: int,
        workdir: str,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._run = run
        self.docker = docker
        self._timeout = timeout
        self._shell = shell
        self.seconds = seconds
        self._workdir = workdir
        self._clock = clock

    def logs(self, name: str, since: str | None, tail: int | None = None) -> tuple[IO[str], IO[str]]:
        """`docker logs --timestamps` of a container (its last `tail` lines, of those since `since`): its
        stdout and its stderr, each in a file opened for reading (and already removed). Files, not pipes:
        run_command gathers a command's output by concatenation, which takes minutes for a log of a few
        hundred megabytes."""
        window = ["--tail", str(tail)] if tail is not None else []
        argv = [self.docker, "logs", "--timestamps", *(["--since", since] if since else []), *window, name]
        paths = [self._new_file(suffix) for suffix in (".stdout", ".stderr")]
        try:
            rc, _out, err = self._bounded([self._shell, "-c", _REDIRECTED, "sh", *paths, *argv], argv)
            if rc != 0:
                raise LogSourceError(f"`{' '.join(argv)}` failed (rc={rc}): {_tail_of(paths[1]) or err.strip()}")
            out_file, err_file = (_docker_output(path) for path in paths)
        finally:
            for path in paths:
                os.unlink(path)
        return out_file, err_file

    def state(self, name: str) -> dict[str, Any]:
        argv = [self.docker, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name]
        rc, out, err = self._bounded(argv, argv)
        if rc != 0:
            raise LogSourceError(f"`{' '.join(argv)}` failed (rc={rc}): {err.strip() or out.strip()}")
        status, _separator, code = out.strip().partition(" ")
        return {"status": status, "exit_code": int(code) if code.lstrip("-").isdigit() else None}

    def _new_file(self, suffix: str) -> str:
        descriptor, path = tempfile.mkstemp(prefix="docker-logs-", suffix=suffix, dir=self._workdir)
        os.close(descriptor)
        return path

    def _bounded(self, argv: list[str], shown: list[str]) -> tuple[int, str, str]:
        rc, out, err, stopped = run_bounded(self._run, self._timeout, self.seconds, argv, self._clock)
        if stopped:
            raise LogSourceError(timeout_message(shown, self.seconds))
        return rc, out, err


def _line_count(handle: IO[str]) -> int:
    """The lines in a file docker logs wrote, read from its start again afterwards."""
    count = sum(chunk.count("\n") for chunk in iter(lambda: handle.read(_STREAM_CHARS), ""))
    handle.seek(0)
    return count


def _after(lines: Iterator[str], stamp: str, count: int) -> Iterator[str]:
    """The lines after the leading ones stamped before `stamp` and the first `count` stamped with it."""
    for line in lines:
        line_stamp = _timestamp(line)
        if line_stamp < stamp or (line_stamp == stamp and count > 0):
            count -= line_stamp == stamp
            continue
        yield line
        break
    yield from lines


def _stream_lines(stream: str, handle: IO[str], taken: tuple[str, int] | None) -> Iterator[tuple[str, str]]:
    """The lines of one stream of a `docker logs` run not taken before, with the stream's name."""
    with handle:
        lines = _all_lines(handle, with_unfinished=False)
        for line in lines if taken is None else _after(lines, *taken):
            yield stream, line


class ContainerLog:
    """A container's log via `docker logs --timestamps`: stdout and stderr, each followed on its own,
    their lines merged by time. After the first read, docker is only asked for the lines since
    shortly before the newest one seen, and those already taken are dropped."""

    def __init__(self, docker: DockerCommands, name: str) -> None:
        self.docker = docker
        self.name = name
        # Per stream: the timestamp of its last line taken, and how many of its lines taken carry it.
        # Only each stream's own order is final, so each keeps its own place.
        self._taken: dict[str, tuple[str, int]] = {}
        self._newest: str | None = None
        self._batch: Iterator[tuple[str, str]] | None = None

    def read_new(self) -> list[str]:
        if self._batch is None:
            self._batch = self._lines(self._newest and _since_argument(self._newest))
        lines: list[str] = []
        size = 0
        for stream, line in self._batch:
            self._take(stream, line)
            lines.append(line)
            size += len(line)
            if size >= MAX_READ_CHARS:
                return lines
        self._batch = None
        return lines

    def backlog(self) -> bool:
        return self._batch is not None

    def missing(self) -> str | None:
        return None

    def stream(self) -> Iterator[str]:
        for _stream, line in self._lines(None):
            yield line

    def state(self) -> dict[str, Any] | None:
        return self.docker.state(self.name)

    def _lines(self, since: str | None) -> Iterator[tuple[str, str]]:
        if since is not None:
            out, err = self.docker.logs(self.name, since, tail=POLL_WINDOW_LINES)
            if _line_count(out) + _line_count(err) < POLL_WINDOW_LINES:
                return self._merged(out, err)
            out.close()
            err.close()
        return self._merged(*self.docker.logs(self.name, since))

    def _merged(self, out: IO[str], err: IO[str]) -> Iterator[tuple[str, str]]:
        streams = (_stream_lines(name, handle, self._taken.get(name)) for name, handle in (("stdout", out), ("stderr", err)))
        return heapq.merge(*streams, key=lambda tagged: _timestamp(tagged[1]))

    def _take(self, stream: str, line: str) -> None:
        stamp = _timestamp(line)
        taken = self._taken.get(stream)
        self._taken[stream] = (stamp, taken[1] + 1) if taken is not None and taken[0] == stamp else (stamp, 1)
        if stamp[:1].isdigit() and (self._newest is None or stamp > self._newest):
            self._newest = stamp


# The argument spec entries of a module reading a log through log_source() (doc fragment _vllm_log_source).
LOG_SOURCE_ARGUMENTS: dict[str, dict[str, Any]] = {
    "path": {"type": "path"},
    "container": {"type": "str"},
    "docker_path": {"type": "str", "default": "docker"},
    "command_timeout": {"type": "int", "default": 300},
    "tail_lines": {"type": "int", "default": 20},
}


def log_source(module: Any) -> FileLog | ContainerLog:
    """The source named by an AnsibleModule's `path` or `container` parameter."""
    params = module.params
    if params.get("path") is not None:
        return FileLog(params["path"])
    commands = DockerCommands(
        lambda argv: module.run_command(argv, environ_update={"LC_ALL": "C"}, errors="surrogate_then_replace"),
        docker=module.get_bin_path(params["docker_path"], required=True),
        timeout=module.get_bin_path("timeout", required=True),
        shell=module.get_bin_path("sh", required=True),
        seconds=params["command_timeout"],
        workdir=module.tmpdir,
    )
    return ContainerLog(commands, params["container"])


class Tee:
    """Passes lines through while keeping the last ones, so one pass yields facts and a tail."""

    def __init__(self, lines: Iterator[str], count: int) -> None:
        self._lines = lines
        self.last: deque[str] = deque(maxlen=max(0, min(count, MAX_TAIL_LINES)))

    def __iter__(self) -> Iterator[str]:
        last = self.last
        for line in self._lines:
            last.append(line)
            yield line
