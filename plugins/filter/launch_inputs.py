# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A node's record of what shaped its launches, with only the inputs the collection writes (roles/vllm_serve/tasks/inputs.yml)."""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.module_utils._launch_inputs import checked_launch_record


def vllm_launch_inputs(record):
    """The record's known inputs, each of its shape, and what was refused (named, without values)."""
    return checked_launch_record(record)


class FilterModule:
    def filters(self):
        return {"vllm_launch_inputs": vllm_launch_inputs}
