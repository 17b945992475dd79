# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The doctor's findings on one cluster, and what of a node's NCCL environment its bundle may show (playbooks/doctor.yml)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bundle_mask import masked_env_file
from ansible_collections.sparkinfer.cluster.plugins.module_utils._doctor import cluster_findings


def doctor_findings(readings, head, members):
    """Every finding on the cluster of head (its nodes: members), errors first, from the nodes' readings."""
    if not isinstance(readings, list) or not all(isinstance(reading, dict) and "node" in reading for reading in readings):
        raise AnsibleFilterError("doctor_findings: expected a list of the nodes' readings, each a dict with its node")
    try:
        return cluster_findings(head, list(members), readings)
    except (KeyError, TypeError) as error:
        raise AnsibleFilterError(f"doctor_findings: a reading lacks what the doctor judges: {error!r}") from error


def doctor_bundle_env(text):
    """An environment file's text with only the values of the names the collection writes left unmasked."""
    if not isinstance(text, str):
        raise AnsibleFilterError(f"doctor_bundle_env: expected the file's text, got {type(text).__name__}")
    return masked_env_file(text)


class FilterModule:
    def filters(self):
        return {"doctor_findings": doctor_findings, "doctor_bundle_env": doctor_bundle_env}
