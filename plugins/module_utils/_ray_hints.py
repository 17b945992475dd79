# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What a failing ``docker exec CONTAINER ray ...`` means, and what to do about a Ray cluster's problems:
every plain hint ray_cluster_info gives, in one place."""

from __future__ import annotations

import re

_DIAGNOSES = (
    ("no_container", re.compile(r"No such container"), "the container does not exist on this host"),
    ("container_stopped", re.compile(r"is not running|is restarting|is paused"), "the container is not running"),
    (
        "ray_missing",
        re.compile(r'exec: "?ray"?: executable file not found|ray: (?:command )?not found|No module named .?ray'),
        "the image has no `ray` (vLLM no longer bundles Ray since about 0.18; NGC vLLM 26.05 lacks it): install ray[default] in the image",
    ),
    (
        "docker_daemon",
        re.compile(r"Cannot connect to the Docker daemon|permission denied while trying to connect to the Docker daemon"),
        "the Docker daemon did not answer (not running, or no permission on its socket)",
    ),
    (
        "gcs_unreachable",
        re.compile(r"Could not find any running Ray instance|Failed to connect to GCS|Timed out while waiting for GCS|Failed to get cluster ID from GCS"),
        "no Ray head answers at that address: the head's `ray start --head` is not running or listens elsewhere",
    ),
    (
        "state_api_unavailable",
        re.compile(r"Failed to connect to API server|Failed to make request to http"),
        "the state API (`ray list nodes`) is unavailable: the dashboard is off (ray start --include-dashboard=true --dashboard-host 127.0.0.1 enables it)",
    ),
)


def diagnose(text: str) -> tuple[str, str] | None:
    """What a failing ``docker exec CONTAINER ray ...`` printed means: (kind, plain hint), or None."""
    for kind, pattern, hint in _DIAGNOSES:
        if pattern.search(text):
            return kind, hint
    return None


# What to do about a node that is not in the cluster, or short of a resource, or a head that does not answer

CHECK_NODE = "check its ray container logs, the fabric, and that RAY_NODE_IP_ADDRESS is its fabric address"


def resource_hint(resource: str) -> str:
    if resource == "GPU":
        return "check that its ray container has the GPU (--gpus all or the nvidia runtime) and that ray start did not get --num-gpus 0"
    return f"check the resources its ray start declares (--num-cpus, --num-gpus, --resources) for {resource}"


def silent_head_hint(container: str) -> str:
    return (
        f"the Docker daemon or the Ray head in {container} does not answer: check `docker ps`, `docker logs {container}` "
        f"and `docker exec {container} ray status` by hand"
    )
