"""timeout(1) around a real command: a command that hangs is stopped and recognised as timed out."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import (
    bounded_argv,
    run_bounded,
    timed_out,
    timeout_message,
)

TIMEOUT = shutil.which("timeout") or "/usr/bin/timeout"


def _run(argv: list[str]) -> tuple[int, float]:
    started = time.monotonic()
    rc = subprocess.run(argv, check=False, capture_output=True, timeout=30).returncode
    return rc, time.monotonic() - started


def test_a_hanging_command_is_stopped_and_seen_as_timed_out() -> None:
    rc, elapsed = _run(bounded_argv(TIMEOUT, 1, ["sleep", "20"]))
    assert elapsed < 10
    assert timed_out(rc, elapsed, 1)


@pytest.mark.parametrize("rc", [137, -9])
def test_a_command_killed_after_ignoring_sigterm_past_its_bound_is_timed_out(rc: int) -> None:
    # timeout(1) KILLs its own process group then (seen as -9 by subprocess; checked by hand: 10 s more per run).
    assert timed_out(rc, 11.0, 1)


def test_a_command_that_fails_on_its_own_is_not_a_timeout() -> None:
    rc, elapsed = _run(bounded_argv(TIMEOUT, 5, ["sh", "-c", "exit 3"]))
    assert rc == 3
    assert not timed_out(rc, elapsed, 5)


def test_a_command_killed_early_by_someone_else_is_not_a_timeout() -> None:
    rc, elapsed = _run(bounded_argv(TIMEOUT, 20, ["sh", "-c", "kill -KILL $$"]))
    assert rc in (137, -9)
    assert not timed_out(rc, elapsed, 20)


@pytest.mark.parametrize("seconds", [0, -5])
def test_a_timeout_that_is_not_positive_is_refused(seconds: int) -> None:
    with pytest.raises(ValueError, match="positive number of seconds"):
        bounded_argv(TIMEOUT, seconds, ["true"])


def test_the_message_names_the_command_and_the_bound() -> None:
    assert timeout_message(["nvidia-smi", "-q"], 30) == "`nvidia-smi -q` did not finish within 30 s and was stopped"


def test_run_bounded_runs_the_bounded_argv_with_the_options_and_times_it() -> None:
    calls: list[tuple[list[str], dict[str, str]]] = []
    ticks = iter([100.0, 131.0])

    def run(argv: list[str], **options: str) -> tuple[int, str, str]:
        calls.append((argv, options))
        return 124, "", ""

    assert run_bounded(run, TIMEOUT, 30, ["nvidia-smi"], lambda: next(ticks), environ_update="C") == (124, "", "", True)
    assert calls == [(bounded_argv(TIMEOUT, 30, ["nvidia-smi"]), {"environ_update": "C"})]
