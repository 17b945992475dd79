# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node's record of what shaped its launches, with only the inputs the collection writes (roles/vllm_serve/tasks/inputs.yml)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._image_prune import images_to_prune
from ansible_collections.sparkinfer.cluster.plugins.module_utils._launch_inputs import LAUNCH_INPUTS, checked_launch_record


def vllm_launch_inputs(record):
    """The record's known inputs, each of its shape, and what was refused (named, without values)."""
    return checked_launch_record(record)


def vllm_launch_inputs_of(variables):
    """The launch inputs among vllm_serve's variables: each of the 17 the record keeps, by its full name, in order."""
    if not isinstance(variables, Mapping):
        raise AnsibleFilterError(f"vllm_launch_inputs_of: expected vllm_serve's variables as a mapping, got {type(variables).__name__}")
    missing = [name for name in LAUNCH_INPUTS if name not in variables]
    if missing:
        raise AnsibleFilterError(f"vllm_launch_inputs_of: the variables lack {', '.join(missing)}")
    return {name: variables[name] for name in LAUNCH_INPUTS}


def vllm_images_to_prune(images, keep, containers, held):
    """Of the images a node served before, those to remove and the record's list after (module_utils/_image_prune.py)."""
    try:
        return images_to_prune(images, int(keep), containers, held)
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"vllm_images_to_prune: {exc}") from exc


class FilterModule:
    def filters(self):
        return {
            "vllm_launch_inputs": vllm_launch_inputs,
            "vllm_launch_inputs_of": vllm_launch_inputs_of,
            "vllm_images_to_prune": vllm_images_to_prune,
        }
