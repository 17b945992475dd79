# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""External commands bounded in time by coreutils' timeout(1).

A wedged tool (an `nvidia-smi` on a hung GPU, a Docker daemon that stopped answering) must not
hang a play: every command a module runs goes through timeout(1), which stops the command's whole
process group, and the module names the command in its error. No I/O here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

# Seconds timeout(1) waits after SIGTERM before it sends SIGKILL to the process group.
KILL_AFTER = 10
# timeout(1) exits 124 when it stopped the command. When it had to KILL it, it kills its own process
# group, itself included: a shell then sees 128 + 9, Python's subprocess (run_command) -9.
TIMEOUT_RC = 124
KILLED_RCS = (137, -9)


def bounded_argv(timeout_path: str, seconds: int, argv: Sequence[str]) -> list[str]:
    """argv run under timeout(1) at `timeout_path`, stopped after `seconds`."""
    if seconds <= 0:
        raise ValueError(f"a command's timeout must be a positive number of seconds, not {seconds}")
    return [timeout_path, f"--kill-after={KILL_AFTER}", str(seconds), *argv]


def timed_out(rc: int, elapsed: float, seconds: int) -> bool:
    """Whether a command run by bounded_argv() was stopped by its timeout rather than ending itself."""
    return rc == TIMEOUT_RC or (rc in KILLED_RCS and elapsed >= seconds)


def run_bounded(
    run: Callable[..., tuple[int, str, str]], timeout_path: str, seconds: int, argv: Sequence[str], clock: Callable[[], float], **run_options: Any
) -> tuple[int, str, str, bool]:
    """Run argv under timeout(1) through `run` (AnsibleModule.run_command and its options): its rc, stdout,
    stderr, and whether the timeout stopped it."""
    started = clock()
    rc, out, err = run(bounded_argv(timeout_path, seconds, argv), **run_options)
    return rc, out, err, timed_out(rc, clock() - started, seconds)


def timeout_message(argv: Sequence[str], seconds: int) -> str:
    """The error that names the command that did not finish in time."""
    return f"`{' '.join(argv)}` did not finish within {seconds} s and was stopped"
