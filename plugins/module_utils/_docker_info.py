# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parser for `docker info --format '{{json .}}'`: engine version, runtimes, drivers.

No I/O here: callers pass the text the command printed. The same JSON comes back from the
Engine API's `GET /info` (the CLI adds a `ClientInfo` member and, with some clients, the
`ServerErrors` it met), so both parse.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

# The name nvidia-ctk registers the NVIDIA container runtime under
# (`nvidia-ctk runtime configure --runtime=docker`).
NVIDIA_RUNTIME = "nvidia"
# What DriverStatus holds when the engine keeps images in containerd's store (Docker Desktop and Docker 29's default,
# `"features": {"containerd-snapshotter": true}` before): `Driver` is then `overlayfs`, the snapshotter's.
CONTAINERD_STORE_STATUS = ["driver-type", "io.containerd.snapshotter.v1"]
DOCKER_INFO_ARGS = ("info", "--format", "{{json .}}")


class DockerInfoParseError(ValueError):
    """Raised when `docker info` printed something that is not its JSON document."""


@dataclass(frozen=True)
class DockerInfo:
    server_version: str | None
    runtimes: tuple[str, ...]
    default_runtime: str | None
    nvidia_runtime_path: str | None
    cgroup_driver: str | None
    storage_driver: str | None
    # "containerd" or "classic" (the graph drivers'), None when no daemon answered.
    image_store: str | None
    root_dir: str | None
    server_errors: tuple[str, ...]

    @property
    def nvidia_runtime(self) -> bool:
        return NVIDIA_RUNTIME in self.runtimes

    @property
    def answered(self) -> bool:
        """True when a daemon answered: the client fills ServerVersion only from the daemon."""
        return bool(self.server_version) and not self.server_errors

    def as_dict(self) -> dict:
        facts = asdict(self)
        facts["runtimes"] = list(self.runtimes)
        facts["server_errors"] = list(self.server_errors)
        facts["nvidia_runtime"] = self.nvidia_runtime
        return facts


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_docker_info(text: str) -> DockerInfo:
    """Parse the JSON object `docker info --format '{{json .}}'` prints (one line, or the API body)."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        first_line = text.strip().splitlines()[0] if text.strip() else ""
        raise DockerInfoParseError(f"docker info printed no JSON document: {first_line[:200]!r}") from exc
    if not isinstance(document, dict):
        raise DockerInfoParseError(f"docker info printed a JSON {type(document).__name__}, not an object")
    runtimes = document.get("Runtimes") or {}
    if not isinstance(runtimes, dict):
        raise DockerInfoParseError(f"docker info Runtimes is a {type(runtimes).__name__}, not an object of runtimes")
    nvidia = runtimes.get(NVIDIA_RUNTIME)
    driver_status = document.get("DriverStatus") or []
    if not isinstance(driver_status, list):
        raise DockerInfoParseError(f"docker info DriverStatus is a {type(driver_status).__name__}, not a list of pairs")
    storage_driver = _text(document.get("Driver"))
    errors = document.get("ServerErrors") or []
    if not isinstance(errors, list):
        raise DockerInfoParseError(f"docker info ServerErrors is a {type(errors).__name__}, not a list of messages")
    return DockerInfo(
        server_version=_text(document.get("ServerVersion")),
        runtimes=tuple(sorted(runtimes)),
        default_runtime=_text(document.get("DefaultRuntime")),
        nvidia_runtime_path=_text(nvidia.get("path")) if isinstance(nvidia, dict) else None,
        cgroup_driver=_text(document.get("CgroupDriver")),
        storage_driver=storage_driver,
        image_store=("containerd" if CONTAINERD_STORE_STATUS in driver_status else "classic") if storage_driver else None,
        root_dir=_text(document.get("DockerRootDir")),
        server_errors=tuple(str(error).strip() for error in errors if str(error).strip()),
    )
