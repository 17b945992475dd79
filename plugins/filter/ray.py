# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The `ray start` arguments of a Ray cluster's head or worker, on fixed ports."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ray_start import RayStartError, ray_start_args


def ray_start_argv(spec, head_address=None):
    """``["start", "--block", ...]``: the head's without head_address, a worker's joining head_address with it."""
    try:
        return ray_start_args(spec, head_address)
    except RayStartError as exc:
        raise AnsibleFilterError(f"ray_start_argv: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"ray_start_argv": ray_start_argv}
