# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller-side front ends of the collection's parsers: text in, facts out."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log_text


def vllm_log_facts(text):
    """The facts of a vLLM log's latest start (the same parser as sparkinfer.cluster.vllm_log_info)."""
    if not isinstance(text, str):
        raise AnsibleFilterError(f"vllm_log_facts expects the log as a string, got {type(text).__name__}")
    return parse_vllm_log_text(text)


class FilterModule:
    def filters(self):
        return {"vllm_log_facts": vllm_log_facts}
