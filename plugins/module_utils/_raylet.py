# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The Ray raylet of a container, from what ``docker top CONTAINER -o pid,args`` printed.

``docker top`` is ps run by the node's Docker engine: it needs nothing inside the image. The raylet
is the process whose executable is Ray's ``.../ray/core/src/ray/raylet/raylet``; its arguments name
the node id it registered with (``--node_id=``) and its address (``--node_ip_address=``). Other Ray
processes name the node id too (the client server's ``--node-id=``), so only the raylet's line is
read. No I/O here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

RAYLET_EXECUTABLE_SUFFIX = "/ray/raylet/raylet"
_FLAGS = {"--node_id=": "node_id", "--node_ip_address=": "node_ip_address"}


class DockerTopParseError(ValueError):
    """Raised when the text is not what ``docker top ... -o pid,args`` prints."""


@dataclass(frozen=True)
class Raylet:
    """The raylet process of a container: its PID, and the node id and address it registered with."""

    pid: int
    node_id: str | None
    node_ip_address: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def parse_docker_top(text: str) -> list[tuple[int, str]]:
    """The (PID, command line) rows of ``docker top CONTAINER -o pid,args``."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or lines[0].split() != ["PID", "COMMAND"]:
        first = lines[0][:200] if lines else ""
        raise DockerTopParseError(f"not the output of `docker top ... -o pid,args` (its header is PID COMMAND): it starts with {first!r}")
    rows = []
    for line in lines[1:]:
        pid, _space, args = line.strip().partition(" ")
        if not pid.isdigit():
            raise DockerTopParseError(f"a process line of `docker top` without a PID: {line[:200]!r}")
        rows.append((int(pid), args.strip()))
    return rows


def raylet_of(rows: list[tuple[int, str]]) -> Raylet | None:
    """The raylet among a container's processes, or None when it has none."""
    for pid, args in rows:
        words = args.split()
        if words and words[0].endswith(RAYLET_EXECUTABLE_SUFFIX):
            found: dict[str, str] = {}
            for word in words[1:]:
                for prefix, name in _FLAGS.items():
                    if word.startswith(prefix):
                        found.setdefault(name, word[len(prefix) :])
            return Raylet(pid=pid, node_id=found.get("node_id") or None, node_ip_address=found.get("node_ip_address") or None)
    return None
