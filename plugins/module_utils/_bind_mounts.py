# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A container's bind mounts, declared as data by a role (its vars/main.yml), as Docker's SOURCE:TARGET[:ro] volumes.
No I/O here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class BindMountError(ValueError):
    """A mount that cannot be a Docker volume (named in the message)."""


def _path(mount: Mapping, key: str, value: Any) -> str:
    # Docker splits a volume at its colons: a path with one would mount something else.
    if not isinstance(value, str) or not value.startswith("/") or ":" in value:
        raise BindMountError(f"the mount {dict(mount)!r} has the {key} {value!r}: give an absolute path without ':'")
    return value


def bind_volumes(mounts: Any) -> list[str]:
    """The volumes of a list of mounts, in order: a string is a volume already (SOURCE:TARGET[:MODE]), a list holds such
    strings, and a mapping is {source, target (default: the source), read_only (default false), wanted (default true)},
    left out when not wanted."""
    if not isinstance(mounts, list):
        raise BindMountError(f"the mounts must be a list, got {type(mounts).__name__}")
    volumes: list[str] = []
    for mount in mounts:
        if isinstance(mount, str):
            volumes.append(mount)
        elif isinstance(mount, list) and all(isinstance(volume, str) for volume in mount):
            volumes.extend(mount)
        elif isinstance(mount, Mapping):
            if not mount.get("wanted", True):
                continue
            source = _path(mount, "source", mount.get("source"))
            target = _path(mount, "target", mount.get("target", source))
            volumes.append(f"{source}:{target}:ro" if mount.get("read_only") else f"{source}:{target}")
        else:
            raise BindMountError(f"a mount must be a volume string, a list of them or a mapping with its source, got {mount!r}")
    return volumes
