# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The doctor's findings on one cluster, and what of a node's NCCL environment its bundle may show (playbooks/doctor.yml)."""

from __future__ import annotations

import json
from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bundle_mask import bundle_files, command_texts, masked_env_file, masked_inspect
from ansible_collections.sparkinfer.cluster.plugins.module_utils._doctor import api_reading, cluster_findings


def doctor_findings(readings, head, members, inventory=None):
    """Every finding on the cluster of head (its nodes: members), errors first, from the nodes' readings and, given
    inventory_node_problems' result, the inventory's values."""
    if not isinstance(readings, list) or not all(isinstance(reading, dict) and "node" in reading for reading in readings):
        raise AnsibleFilterError("doctor_findings: expected a list of the nodes' readings, each a dict with its node")
    if inventory is not None and not (isinstance(inventory, Mapping) and all(isinstance(problems, list) for problems in inventory.values())):
        raise AnsibleFilterError("doctor_findings: expected inventory as inventory_node_problems returns it, each node with a list of its problems")
    try:
        return cluster_findings(head, list(members), readings, inventory)
    except (KeyError, TypeError) as error:
        raise AnsibleFilterError(f"doctor_findings: a reading lacks what the doctor judges: {error!r}") from error


def doctor_api_reading(answers):
    """What the API answered the doctor's GET /health and GET /v1/models (the loop's uri results, in that order)."""
    if not isinstance(answers, list) or not all(isinstance(answer, Mapping) for answer in answers):
        raise AnsibleFilterError("doctor_api_reading: expected the uri results of GET /health and GET /v1/models, in that order")
    return api_reading(answers)


def doctor_bundle_env(text):
    """An environment file's text with only the values of the names the collection writes left unmasked."""
    if not isinstance(text, str):
        raise AnsibleFilterError(f"doctor_bundle_env: expected the file's text, got {type(text).__name__}")
    return masked_env_file(text)


def _text(value):
    # As to_nice_json writes a reading.
    return value if isinstance(value, str) else json.dumps(value, indent=4, sort_keys=True)


def doctor_bundle_files(results, files, inspects, secrets):
    """A node's bundle files {name, content}: the commands' outputs (results of a loop over {name, argv}), the files
    given (a reading not a string is written as JSON), docker-inspect.json of the containers given (their environment
    values masked), every occurrence of each secret masked."""
    if not isinstance(results, list) or not all(isinstance(result, Mapping) and "item" in result for result in results):
        raise AnsibleFilterError("doctor_bundle_files: expected the results of the commands' loop (register's results)")
    if not isinstance(files, Mapping) or not isinstance(inspects, list) or not isinstance(secrets, list):
        raise AnsibleFilterError("doctor_bundle_files: expected files as a mapping of names, inspects and secrets as lists")
    texts = command_texts(results)
    texts["docker-inspect.json"] = _text([masked_inspect(dict(inspect)) for inspect in inspects])
    texts.update({name: _text(value) for name, value in files.items()})
    return bundle_files(texts, secrets)


class FilterModule:
    def filters(self):
        return {
            "doctor_findings": doctor_findings,
            "doctor_api_reading": doctor_api_reading,
            "doctor_bundle_env": doctor_bundle_env,
            "doctor_bundle_files": doctor_bundle_files,
        }
