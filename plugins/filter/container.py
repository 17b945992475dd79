# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The entrypoint the collection's containers run their program with, through an image's wrapper entrypoint if it has one,
and what the doctor reads of a container's state."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bind_mounts import BindMountError, bind_volumes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._env_layers import EnvLayerError, merged_env
from ansible_collections.sparkinfer.cluster.plugins.module_utils._image_entrypoint import container_entrypoint as entrypoint_for


def container_entrypoint(image_entrypoint, program):
    """The entrypoint for program in a container of an image whose own entrypoint is image_entrypoint (None: none)."""
    if image_entrypoint is not None and not (isinstance(image_entrypoint, list) and all(isinstance(word, str) for word in image_entrypoint)):
        raise AnsibleFilterError(f"container_entrypoint: expected the image's entrypoint as a list of words or null, got {image_entrypoint!r}")
    if not isinstance(program, str) or not program:
        raise AnsibleFilterError("container_entrypoint: expected the program to run, such as vllm or ray")
    return entrypoint_for(program, image_entrypoint)


def container_state(info, name):
    """What the doctor judges of a container, from community.docker.docker_container_info's result for it."""
    if not isinstance(info, dict) or not isinstance(info.get("exists"), bool):
        raise AnsibleFilterError(f"container_state: expected the result of community.docker.docker_container_info, got {type(info).__name__}")
    if not info["exists"]:
        return {"name": name, "status": "absent"}
    container = info["container"]
    state = container["State"]
    return {
        "name": name,
        "status": state["Status"],
        "exit_code": state["ExitCode"],
        "oom_killed": state["OOMKilled"],
        "restart_count": container["RestartCount"],
        "image_id": container["Image"],
        "started_at": state["StartedAt"],
    }


def container_volumes(mounts):
    """Docker's volumes (SOURCE:TARGET[:ro]) of a role's bind mounts, declared as data (module_utils/_bind_mounts.py)."""
    try:
        return bind_volumes(mounts)
    except BindMountError as error:
        raise AnsibleFilterError(f"container_volumes: {error}") from error


def container_env(layers):
    """A container's environment from a role's layers of variables, merged in order (module_utils/_env_layers.py)."""
    try:
        return merged_env(layers)
    except EnvLayerError as error:
        raise AnsibleFilterError(f"container_env: {error}") from error


class FilterModule:
    def filters(self):
        return {
            "container_entrypoint": container_entrypoint,
            "container_state": container_state,
            "container_volumes": container_volumes,
            "container_env": container_env,
        }
