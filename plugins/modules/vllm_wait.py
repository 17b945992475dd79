#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_wait
short_description: Wait for vLLM to come up, failing fast on what goes wrong
version_added: 0.1.0
description:
  - Follows a vLLM container's or file's log until it reaches O(stage), and with O(url) until
    C(/health) and C(/v1/models) answer 200.
  - Fails at once, with the facts read so far, the seconds to each stage and a capped tail, when
    the log shows a failure (out of memory, KV cache too small, unsupported architecture, NCCL
    error, Ray placement timeout, refused argument, other error); when a fact contradicts
    O(expect) (the gate); when the container exits; when no progress line appears for
    O(stall_timeout) seconds once distributed init has begun (the NCCL hang signature), for
    O(load_stall_timeout) seconds while the weights load, or for
    O(compile_stall_timeout) seconds inside torch.compile or FlashInfer's autotuning; when vLLM
    says it does not know a variable of O(given_env); or when
    O(timeout) passes.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._vllm_log_source
attributes:
  check_mode:
    support: full
    details:
      - The module only reads; in check mode it waits as it does otherwise.
  diff_mode:
    support: N/A
    details:
      - The module only reads.
options:
  stage:
    description: The start-up stage to wait for.
    type: str
    default: ready
    choices: [starting, args_parsed, architecture_resolved, engine_config, distributed_init, loading_weights,
              weights_loaded, kv_cache_ready, graphs_captured, api_starting, ready]
  expect:
    description:
      - Facts vLLM must show, checked as soon as the log states each one; the first contradiction fails.
      - Keys among C(architecture), C(quantization) (null for none), C(dtype), C(max_model_len),
        C(tensor_parallel_size), C(pipeline_parallel_size), C(attention_backend), C(moe_backend), C(engine),
        C(load_format) (such as C(fastsafetensors)), C(speculative_method) (such as C(mtp); null when vLLM runs without
        speculative decoding), C(nccl_transport) (such as C(NET/IB), which NCCL's RDMA plugin transport C(NET/IBext_v10) also meets; known only
        from C(NCCL_DEBUG=INFO) lines, and a contradiction names the fix).
    type: dict
    default: {}
  expect_sources:
    description:
      - Where an expectation of O(expect) came from, by its key (such as C(recipe qwen3.5-122b-a10b-fp8)); a
        contradiction of that key names it, so the reader knows which setting to change.
    type: dict
    default: {}
  given_env:
    description:
      - Names of the environment variables the container was given. vLLM's C(Unknown vLLM environment variable
        detected) warning for one of them fails the wait once the config shows what vLLM runs with instead, since
        the setting did not take (the entrypoint trap of images configured by environment variables).
    type: list
    elements: str
    default: []
  timeout:
    description:
      - Seconds to wait in all; 1 or more.
      - When O(path) does not exist by then, the failure says so.
    type: int
    default: 900
  stall_timeout:
    description: Seconds without a new log line, once distributed init has begun, that count as a hang; 1 or more.
    type: int
    default: 300
  compile_stall_timeout:
    description:
      - Seconds without a new log line that count as a hang while vLLM is inside torch.compile (from C(Dynamo bytecode
        transform time) to C(Compiling a graph for ... takes) or C(torch.compile takes)) or FlashInfer's autotuning (from
        C(Autotuning process starts) to C(... ends)); 1 or more.
      - A first launch of a model and image on a Spark compiles for minutes, and the other ranks print only their
        shared-memory-broadcast warnings meanwhile, which are not progress.
    type: int
    default: 1800
  load_stall_timeout:
    description:
      - Seconds without a new log line that count as a hang while the weights load (from C(Starting to load model) to
        C(Model loading took)); 1 or more. O(stall_timeout) when not given.
      - Reading 100+ GB of weights takes 456-685 s on Sparks, longer after a page-cache drop, and some loaders print
        nothing until they are done; C(sparkinfer.cluster.vllm_load_stall_timeout) derives a bound from the weights'
        size.
    type: int
  poll_interval:
    description:
      - Seconds between reads of the log; more than 0.
      - A log that already holds more than one read takes (4 MiB) is read on without waiting.
    type: float
    default: 2.0
  url:
    description: The API's base URL (such as C(http://10.0.0.1:8000)); when set, ready also means C(/health) and C(/v1/models) answer 200.
    type: str
  api_key:
    description: The API key for C(/v1/models).
    type: str
  validate_certs:
    description: Verify the API's TLS certificate.
    type: bool
    default: true
  ca_path:
    description:
      - A PEM file of the certificate authorities to verify the API's TLS certificate against (a private CA, or a
        self-signed certificate itself); the system's when not set.
    type: path
seealso:
  - module: sparkinfer.cluster.vllm_log_info
"""

EXAMPLES = r"""
- name: Wait for the FP8 Qwen3.5 MoE across two nodes, failing fast on a wrong image
  sparkinfer.cluster.vllm_wait:
    container: vllm
    expect:
      architecture: Qwen3_5MoeForConditionalGeneration
      quantization: fp8
      tensor_parallel_size: 2
    url: http://192.168.100.10:8000
    api_key: "{{ vllm_serve_api_key }}"
    timeout: 1800
  register: vllm_wait_result

- name: Show how long each stage took
  ansible.builtin.debug:
    var: vllm_wait_result.stage_seconds
"""

RETURN = r"""
vllm_log:
  description: The facts read from the log, as M(sparkinfer.cluster.vllm_log_info) returns them.
  returned: always
  type: dict
  sample: {architecture: Qwen3MoeForCausalLM, quantization: null, stage: ready, outcome: ready}
stage_seconds:
  description: Seconds from the start of the wait to the first sight of each stage.
  returned: always
  type: dict
  sample: {starting: 0.0, architecture_resolved: 12.1, ready: 131.4}
elapsed:
  description: Seconds the wait took.
  returned: always
  type: float
  sample: 131.9
reason:
  description: >-
    Why the wait failed: a failure outcome, C(gate), C(ignored_environment), C(exited), C(stalled) or C(timeout);
    null on success.
  returned: always
  type: str
  sample: gate
tail:
  description: The last O(tail_lines) lines of the log.
  returned: always
  type: list
  elements: str
  sample: ["INFO:     Application startup complete."]
"""

import time
from typing import Any

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.urls import open_url

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import STAGES
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log_source import (
    LOG_SOURCE_ARGUMENTS,
    LogSourceError,
    argument_problem,
    log_source,
    seconds_problem,
)
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_wait import EXPECTABLE, wait_for_vllm


def api_probe(base_url: str, api_key: str | None, validate_certs: bool, ca_path: str | None):
    def probe() -> tuple[bool, str]:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        for path in ("/health", "/v1/models"):
            try:
                response = open_url(base_url.rstrip("/") + path, headers=headers, timeout=5, validate_certs=validate_certs, ca_path=ca_path)
                status = response.getcode()
            except Exception as exc:  # any failure to answer means: not ready yet
                return False, f"{path}: {exc}"
            if status != 200:
                return False, f"{path} answered {status}"
        return True, "ok"

    return probe


def wait_argument_problem(params: dict[str, Any]) -> str | None:
    """Why an option is out of range, or None."""
    problem = (
        seconds_problem("timeout", params["timeout"])
        or seconds_problem("stall_timeout", params["stall_timeout"])
        or seconds_problem("compile_stall_timeout", params["compile_stall_timeout"])
        or (seconds_problem("load_stall_timeout", params["load_stall_timeout"]) if params["load_stall_timeout"] is not None else None)
    )
    if problem is None and params["poll_interval"] <= 0:
        problem = f"poll_interval must be more than 0 seconds, not {params['poll_interval']}"
    return problem or argument_problem(params)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **LOG_SOURCE_ARGUMENTS,
            "stage": {"type": "str", "default": "ready", "choices": list(STAGES)},
            "expect": {"type": "dict", "default": {}},
            "expect_sources": {"type": "dict", "default": {}},
            "given_env": {"type": "list", "elements": "str", "default": []},
            "timeout": {"type": "int", "default": 900},
            "stall_timeout": {"type": "int", "default": 300},
            "compile_stall_timeout": {"type": "int", "default": 1800},
            "load_stall_timeout": {"type": "int"},
            "poll_interval": {"type": "float", "default": 2.0},
            "url": {"type": "str"},
            "api_key": {"type": "str", "no_log": True},
            "validate_certs": {"type": "bool", "default": True},
            "ca_path": {"type": "path"},
        },
        mutually_exclusive=[("path", "container")],
        required_one_of=[("path", "container")],
        supports_check_mode=True,
    )
    params = module.params
    problem = wait_argument_problem(params)
    if problem:
        module.fail_json(msg=problem)
    unknown = sorted(set(params["expect"]) - set(EXPECTABLE))
    if unknown:
        module.fail_json(msg=f"expect has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(EXPECTABLE)}")
    source = log_source(module)
    probe = api_probe(params["url"], params["api_key"], params["validate_certs"], params["ca_path"]) if params["url"] else None
    try:
        outcome = wait_for_vllm(
            source,
            target_stage=params["stage"],
            expect=params["expect"],
            expect_sources=params["expect_sources"],
            given_env=params["given_env"],
            timeout=params["timeout"],
            stall_timeout=params["stall_timeout"],
            compile_stall_timeout=params["compile_stall_timeout"],
            load_stall_timeout=params["load_stall_timeout"],
            poll_interval=params["poll_interval"],
            clock=time.monotonic,
            sleep=time.sleep,
            probe=probe,
            tail_lines=params["tail_lines"],
        )
    except LogSourceError as exc:
        module.fail_json(msg=str(exc))
    result = {
        "changed": False,
        "vllm_log": outcome.facts,
        "stage_seconds": outcome.stage_seconds,
        "elapsed": outcome.elapsed,
        "reason": outcome.reason,
        "tail": outcome.tail,
    }
    if not outcome.ok:
        module.fail_json(msg=outcome.message, **result)
    module.exit_json(msg=outcome.message, **result)


if __name__ == "__main__":
    main()
