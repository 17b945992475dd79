# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What vllm_serve's gate expects vLLM's log to say, with where each expectation came from."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_gate_expect import gate_expectations
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import ServeSpecError


def vllm_gate_expect(model, recipe, settings, spec, given, *, rdma):
    """``{"expect": ..., "sources": ...}`` for sparkinfer.cluster.vllm_wait's expect and expect_sources."""
    for name, value in (("model", model), ("recipe", recipe), ("settings", settings), ("spec", spec), ("given", given)):
        if not isinstance(value, Mapping):
            raise AnsibleFilterError(f"vllm_gate_expect: expected {name} as a mapping, got {type(value).__name__}")
    try:
        return gate_expectations(model, recipe, settings, spec, given, rdma=bool(rdma))
    except ServeSpecError as exc:
        raise AnsibleFilterError(f"vllm_gate_expect: {exc}") from exc
    except (KeyError, TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"vllm_gate_expect: the settings lack a parallel size or hold one that is no number: {exc!r}") from exc


class FilterModule:
    def filters(self):
        return {"vllm_gate_expect": vllm_gate_expect}
