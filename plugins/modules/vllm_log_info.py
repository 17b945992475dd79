#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_log_info
short_description: Read the facts of a vLLM server log
version_added: 0.1.0
description:
  - Parses a vLLM log (any version from 0.5, V0 or V1 engine; plain, C(docker logs --timestamps),
    docker compose, coloured) and returns what it says about the latest start of vLLM - version,
    architecture, quantization, parallel sizes, backends, KV cache, the last stage reached, and
    when the start failed, the decisive line with what to do.
  - Read-only; the log streams through the parser, so its size does not matter.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
  - sparkinfer.cluster._vllm_log_source
options:
  content:
    description: The log itself, as a string.
    type: str
seealso:
  - module: sparkinfer.cluster.vllm_wait
"""

EXAMPLES = r"""
- name: Read the facts of the vLLM container's log
  sparkinfer.cluster.vllm_log_info:
    container: vllm
  register: vllm_log_result

- name: Fail unless vLLM resolved the FP8 Qwen3.5 MoE class
  ansible.builtin.assert:
    that:
      - vllm_log_result.vllm_log.architecture == 'Qwen3_5MoeForConditionalGeneration'
      - vllm_log_result.vllm_log.quantization == 'fp8'

- name: Read a log file
  sparkinfer.cluster.vllm_log_info:
    path: /var/log/vllm/serve.log
"""

RETURN = r"""
vllm_log:
  description: The facts of the latest start in the log; each is null when the log does not say it.
  returned: success
  type: dict
  contains:
    vllm_version: {description: vLLM's version as printed., type: str, returned: always, sample: 0.17.1rc1.dev25+g1a629ce0d}
    engine: {description: "C(v0) or C(v1).", type: str, returned: always, sample: v1}
    architecture: {description: The model class vLLM resolved (or refused)., type: str, returned: always, sample: Qwen3MoeForCausalLM}
    quantization: {description: "vLLM's quantization method, lower case; null for none.", type: str, returned: always, sample: fp8}
    dtype: {description: The model dtype., type: str, returned: always, sample: bfloat16}
    max_model_len: {description: The context length vLLM uses., type: int, returned: always, sample: 131072}
    tensor_parallel_size: {description: Tensor parallel size., type: int, returned: always, sample: 2}
    pipeline_parallel_size: {description: Pipeline parallel size., type: int, returned: always, sample: 1}
    attention_backend: {description: "The attention backend, as vLLM names it.", type: str, returned: always, sample: FLASH_ATTN}
    moe_backend: {description: "The MoE kernel backend, upper case.", type: str, returned: always, sample: TRITON}
    load_format: {description: "How the weights are loaded, from the engine config (lower case).", type: str, returned: always, sample: fastsafetensors}
    speculative_method:
      description: "The speculative decoding method the engine config names (its SpeculativeConfig), null when it runs without."
      type: str
      returned: always
      sample: mtp
    custom_fusions: {description: The compilation fusions enabled., type: list, elements: str, returned: always, sample: [norm_quant]}
    kv_cache_tokens: {description: Tokens the KV cache holds., type: int, returned: always, sample: 75168}
    max_concurrency: {description: "Requests of max_model_len the KV cache holds at once.", type: float, returned: always, sample: 1.89}
    model_weights_gib: {description: Memory the weights took on this rank., type: float, returned: always, sample: 36.73}
    nccl_version: {description: The NCCL version vLLM uses., type: str, returned: always, sample: 2.27.5}
    nccl_transport:
      description:
        - The transport NCCL carries data between nodes with, from the first of its C(NCCL_DEBUG=INFO) channel lines that
          crosses a node (C(via NET/IB/0)), such as C(NET/IB), C(NET/IBext_v10) or C(NET/Socket); null before one.
      type: str
      returned: always
      sample: NET/IB
    world_size: {description: Ranks in the distributed group., type: int, returned: always, sample: 2}
    stage:
      description: The last start-up stage reached.
      type: str
      returned: always
      sample: kv_cache_ready
    outcome:
      description: >-
        C(ready), C(loading) (no failure seen, not ready yet), or the failure class - C(oom),
        C(kv_cache_insufficient), C(unsupported_architecture), C(nccl_error), C(ray_placement_timeout),
        C(bad_argument), C(other_error).
      type: str
      returned: always
      sample: ready
    error:
      description: "The failure: C(category), the decisive C(line) and a C(hint) on what to do; null without failure."
      type: dict
      returned: always
      sample: {category: kv_cache_insufficient, line: "ValueError: To serve at least one request ...", hint: "Set --max-model-len 7740 or lower ..."}
    warnings:
      description: "Recognised warnings that matter, such as C(unknown_env_var:VLLM_MAX_MODEL_LEN) or C(shm_broadcast_stall)."
      type: list
      elements: str
      returned: always
      sample: [default_moe_config]
lines:
  description: How many lines the log had.
  returned: success
  type: int
  sample: 412
tail:
  description: The last O(tail_lines) lines of the log.
  returned: success
  type: list
  elements: str
  sample: ["INFO:     Application startup complete."]
"""

from collections.abc import Iterator

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import VllmLogScanner
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log_source import (
    LOG_SOURCE_ARGUMENTS,
    LogSourceError,
    Tee,
    argument_problem,
    log_source,
)


def log_lines(module: AnsibleModule) -> Iterator[str]:
    if module.params["content"] is not None:
        return iter(module.params["content"].splitlines())
    return log_source(module).stream()


def main() -> None:
    module = AnsibleModule(
        argument_spec={**LOG_SOURCE_ARGUMENTS, "content": {"type": "str"}},
        mutually_exclusive=[("path", "container", "content")],
        required_one_of=[("path", "container", "content")],
        supports_check_mode=True,
    )
    params = module.params
    problem = argument_problem(params)
    if problem:
        module.fail_json(msg=problem)
    tee = Tee(log_lines(module), params["tail_lines"])
    scanner = VllmLogScanner()
    try:
        scanner.feed(tee)
    except LogSourceError as exc:
        module.fail_json(msg=str(exc))
    module.exit_json(
        changed=False,
        vllm_log=scanner.facts(),
        lines=scanner.lines_seen,
        tail=[line.rstrip("\n") for line in tee.last],
    )


if __name__ == "__main__":
    main()
