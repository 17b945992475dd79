# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Where the vLLM modules read a log from: a file, or a Docker container's log."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterator

MAX_TAIL_LINES = 200


class LogSourceError(Exception):
    """The log could not be read; the message says which and why."""


class FileLog:
    """A log file read incrementally: each read_new() returns the complete lines added since."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._offset = 0
        self._partial = ""

    def read_new(self) -> list[str]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self._offset)
                chunk = handle.read()
                self._offset = handle.tell()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc
        text = self._partial + chunk
        lines = text.split("\n")
        self._partial = lines.pop()
        return lines

    def stream(self) -> Iterator[str]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                yield from handle
        except OSError as exc:
            raise LogSourceError(f"cannot read {self.path}: {exc}") from exc

    def state(self) -> dict[str, Any] | None:
        return None


def _stream_lines(text: str) -> list[str]:
    """A stream's complete lines. Split on newlines only: a progress bar's carriage returns stay
    inside the one line that Docker gave a timestamp."""
    return text.split("\n")[:-1]


def _timestamp(line: str) -> str:
    """The RFC 3339 timestamp `docker logs --timestamps` puts before each line (fixed width)."""
    return line.split(" ", 1)[0]


class ContainerLog:
    """A container's log via `docker logs --timestamps`: stdout and stderr, each followed on its own,
    their new lines merged by time."""

    def __init__(self, run: Callable[[list[str]], tuple[int, str, str]], docker: str, name: str) -> None:
        self._run = run
        self.docker = docker
        self.name = name
        self._seen_out = 0
        self._seen_err = 0

    def _streams(self) -> tuple[list[str], list[str]]:
        rc, out, err = self._run([self.docker, "logs", "--timestamps", self.name])
        if rc != 0:
            raise LogSourceError(f"docker logs {self.name} failed (rc={rc}): {err.strip() or out.strip()}")
        return _stream_lines(out), _stream_lines(err)

    def read_new(self) -> list[str]:
        out, err = self._streams()
        # A line of one stream can be older than a line of the other already read: only each
        # stream's own order is final, so each keeps its own count.
        new = out[self._seen_out :] + err[self._seen_err :]
        self._seen_out, self._seen_err = len(out), len(err)
        return sorted(new, key=_timestamp)

    def stream(self) -> Iterator[str]:
        out, err = self._streams()
        yield from sorted(out + err, key=_timestamp)

    def state(self) -> dict[str, Any] | None:
        rc, out, err = self._run([self.docker, "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", self.name])
        if rc != 0:
            raise LogSourceError(f"docker inspect {self.name} failed (rc={rc}): {err.strip() or out.strip()}")
        status, _separator, code = out.strip().partition(" ")
        return {"status": status, "exit_code": int(code) if code.lstrip("-").isdigit() else None}


# The argument spec entries of a module reading a log through log_source() (doc fragment _vllm_log_source).
LOG_SOURCE_ARGUMENTS: dict[str, dict[str, Any]] = {
    "path": {"type": "path"},
    "container": {"type": "str"},
    "docker_path": {"type": "str", "default": "docker"},
    "tail_lines": {"type": "int", "default": 20},
}


def log_source(
    params: dict[str, Any],
    get_bin_path: Callable[..., str],
    run_command: Callable[..., tuple[int, str, str]],
) -> FileLog | ContainerLog:
    """The source named by a module's `path` or `container` parameter."""
    if params.get("path") is not None:
        return FileLog(params["path"])
    docker = get_bin_path(params["docker_path"], required=True)
    return ContainerLog(lambda argv: run_command(argv, environ_update={"LC_ALL": "C"}), docker, params["container"])


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
