# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The `ray start` arguments of a node of a Ray cluster on fixed ports: the head's, or a worker's joining it.

Every port is fixed (Ray picks random ones otherwise), so that a firewall can name them. No I/O here.
"""

from __future__ import annotations

import ipaddress
from typing import Any, Mapping

# The spec's ports, each `ray start` flag it sets and who gets it (the head alone for its own services).
PORT_FLAGS = (
    ("node_manager", "--node-manager-port", False),
    ("object_manager", "--object-manager-port", False),
    ("dashboard_agent_grpc", "--dashboard-agent-grpc-port", False),
    ("dashboard_agent_listen", "--dashboard-agent-listen-port", False),
    ("runtime_env_agent", "--runtime-env-agent-port", False),
    ("metrics_export", "--metrics-export-port", False),
    ("min_worker", "--min-worker-port", False),
    ("max_worker", "--max-worker-port", False),
    ("gcs", "--port", True),
    ("client_server", "--ray-client-server-port", True),
)
SPEC_KEYS = ("node_ip", "num_gpus", "num_cpus", "object_store_memory", "ports", "dashboard")


class RayStartError(ValueError):
    """A spec the arguments cannot be built from (named in the message)."""


def _whole(name: str, value: Any, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        wanted = f"a whole number from {low} to {high}" if high is not None else f"a whole number of at least {low}"
        raise RayStartError(f"{name} must be {wanted}, got {value!r}")
    return value


def _ports(ports: Any, head: bool) -> dict[str, int]:
    if not isinstance(ports, Mapping):
        raise RayStartError(f"ports must be a mapping of port name to number, got {type(ports).__name__}")
    wanted = [key for key, _flag, head_only in PORT_FLAGS if head or not head_only] + (["dashboard"] if head else [])
    missing = [key for key in wanted if key not in ports]
    if missing:
        raise RayStartError(f"ports lacks {', '.join(missing)}")
    checked = {key: _whole(f"ports.{key}", ports[key], 1, 65535) for key in wanted}
    if checked["min_worker"] >= checked["max_worker"]:
        raise RayStartError(f"ports.min_worker ({checked['min_worker']}) must be below ports.max_worker ({checked['max_worker']})")
    return checked


def ray_start_args(spec: Mapping[str, Any], head_address: str | None = None) -> list[str]:
    """``["start", "--block", ...]`` for the head (no head_address) or for a worker joining ``head_address`` (HOST:PORT)."""
    if not isinstance(spec, Mapping):
        raise RayStartError(f"the spec must be a mapping, got {type(spec).__name__}")
    unknown = sorted(set(spec) - set(SPEC_KEYS))
    if unknown:
        raise RayStartError(f"the spec has unknown keys {', '.join(unknown)}; allowed: {', '.join(SPEC_KEYS)}")
    head = head_address is None
    if not head and (not isinstance(head_address, str) or not head_address.strip()):
        raise RayStartError(f"head_address must be the head's HOST:PORT, got {head_address!r}")
    try:
        node_ip = str(ipaddress.IPv4Address(str(spec.get("node_ip"))))
    except ValueError as exc:
        raise RayStartError(f"node_ip must be an IPv4 address, got {spec.get('node_ip')!r}") from exc
    ports = _ports(spec.get("ports"), head)
    args = [
        "start",
        "--block",
        f"--node-ip-address={node_ip}",
        f"--num-gpus={_whole('num_gpus', spec.get('num_gpus'), 0)}",
        f"--object-store-memory={_whole('object_store_memory', spec.get('object_store_memory'), 1)}",
        "--disable-usage-stats",
        "--log-color=false",
    ]
    args += [f"{flag}={ports[key]}" for key, flag, head_only in PORT_FLAGS if not head_only]
    if spec.get("num_cpus") is not None:
        args.append(f"--num-cpus={_whole('num_cpus', spec['num_cpus'], 0)}")
    if not head:
        return [*args, f"--address={head_address}"]
    args += ["--head"] + [f"{flag}={ports[key]}" for key, flag, head_only in PORT_FLAGS if head_only]
    if spec.get("dashboard"):
        return [*args, "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={ports['dashboard']}"]
    return [*args, "--include-dashboard=false"]
