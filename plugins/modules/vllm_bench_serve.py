#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: vllm_bench_serve
short_description: Benchmark a serving vLLM endpoint with vLLM's own C(vllm bench serve), one run per concurrency
version_added: 0.1.0
description:
  - Runs C(vllm bench serve) from the serving image, in a container on the host network (C(--rm), C(--init)), against
    O(base_url), with the random dataset of O(input_len) tokens in and O(output_len) tokens out a request (C(--ignore-eos), so
    every request generates them all), O(num_prompts) requests a run, one run per entry of O(concurrencies)
    (C(--max-concurrency)). The tokenizer is read from the model directory O(tokenizer), mounted read-only.
  - The API key goes to the container's environment as C(OPENAI_API_KEY), which C(vllm bench serve) sends as the
    bearer token; it is never on a command line.
  - Reads the result block each run prints and returns, per concurrency, the request and output token throughput and
    the time to first token, time per output token and inter-token latency (mean, median, P90, P99).
  - Fails naming the run when a request failed, a run printed no complete result, or a run overran O(timeout); with
    O(min_output_throughput), when the output token throughput at the highest concurrency is below it.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
attributes:
  check_mode:
    support: partial
    details:
      - A benchmark only reads, but it loads the server for minutes; in check mode none runs and RV(skipped) is true.
  diff_mode:
    support: N/A
    details:
      - The module changes nothing.
options:
  image:
    description: The image that serves the endpoint (it holds C(vllm bench serve)).
    type: str
    required: true
  base_url:
    description: The server's base URL, without C(/v1), such as C(http://10.10.0.21:8000).
    type: str
    required: true
  served_model_name:
    description: The model name the server answers to (C(/v1/models)).
    type: str
    required: true
  tokenizer:
    description: The model directory on this host, whose tokenizer makes the prompts and counts the tokens.
    type: path
    required: true
  api_key:
    description: The API key of the server.
    type: str
  ca_path:
    description: A CA file that verifies the server's TLS certificate (an C(https) O(base_url)), given to the container as C(SSL_CERT_FILE).
    type: path
  concurrencies:
    description: The concurrencies to run at, one run each, in order.
    type: list
    elements: int
    required: true
  input_len:
    description: Prompt tokens a request (C(--random-input-len)).
    type: int
    default: 1024
  output_len:
    description: Generated tokens a request (C(--random-output-len)).
    type: int
    default: 128
  num_prompts:
    description: Requests a run; null sends 10 per unit of concurrency (at least 10).
    type: int
  min_output_throughput:
    description: The output token throughput (tok/s) the run at the highest concurrency must reach; null checks nothing.
    type: float
  timeout:
    description: Seconds each run may take, under C(timeout(1)); its container is removed when it overruns.
    type: int
    default: 1800
  docker_path:
    description: The C(docker) executable.
    type: str
    default: docker
notes:
  - The container runs as the image's user with C(--network host), so that it reaches an API bound to the host's address.
"""

EXAMPLES = r"""
- name: Benchmark the endpoint at concurrency 1, 4 and 16
  sparkinfer.cluster.vllm_bench_serve:
    image: nvcr.io/nvidia/vllm:26.03-py3
    base_url: http://10.10.0.21:8000
    served_model_name: Qwen3.5-122B-A10B-FP8
    tokenizer: /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8
    api_key: "{{ lookup('ansible.builtin.file', '~/.config/sparkinfer/spark-a-vllm-api-key') }}"
    concurrencies: [1, 4, 16]
    min_output_throughput: 20
  register: bench
"""

RETURN = r"""
results:
  description: One entry per concurrency, in the order run.
  returned: success, and on failure for the runs made
  type: list
  elements: dict
  contains:
    concurrency:
      description: The run's C(--max-concurrency).
      type: int
    num_prompts:
      description: Requests sent.
      type: int
    completed:
      description: Requests that succeeded.
      type: int
    request_throughput:
      description: Requests a second.
      type: float
    output_throughput:
      description: Generated tokens a second, over all requests.
      type: float
    ttft_ms:
      description: Time to first token, C(mean), C(median), C(p90), C(p99) in ms.
      type: dict
    tpot_ms:
      description: Time per output token after the first, likewise.
      type: dict
    itl_ms:
      description: Inter-token latency, likewise.
      type: dict
  sample:
    - concurrency: 4
      num_prompts: 40
      completed: 40
      request_throughput: 0.91
      output_throughput: 116.7
      ttft_ms: {mean: 310.2, median: 290.1, p90: 450.3, p99: 601.8}
skipped:
  description: True in check mode, where no benchmark runs.
  returned: always
  type: bool
"""

import time
import uuid
from typing import Any

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import run_bounded, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_bench import bench_argv, floor_problem, parse_bench_serve, run_problem

# Where the container sees the tokenizer's directory and the CA file.
TOKENIZER_MOUNT = "/run/sparkinfer/tokenizer"
CA_MOUNT = "/run/sparkinfer/ca.pem"


def container_name() -> str:
    """A name no other container has: a run that overruns is found by it, and removed."""
    return f"sparkinfer-bench-{uuid.uuid4().hex[:12]}"


def container_argv(params: dict[str, Any], name: str, concurrency: int, num_prompts: int) -> list[str]:
    """`docker run ... IMAGE bench serve ...` for one run; the key comes from the client's environment, by name only."""
    argv = [params["docker_path"], "run", "--rm", "--init", "--name", name, "--network", "host", "--entrypoint", "vllm"]
    argv += ["--env", "OPENAI_API_KEY", "--volume", f"{params['tokenizer']}:{TOKENIZER_MOUNT}:ro"]
    if params["ca_path"]:
        argv += ["--volume", f"{params['ca_path']}:{CA_MOUNT}:ro", "--env", f"SSL_CERT_FILE={CA_MOUNT}"]
    argv.append(params["image"])
    return argv + bench_argv(
        base_url=params["base_url"],
        model=params["served_model_name"],
        tokenizer=TOKENIZER_MOUNT,
        input_len=params["input_len"],
        output_len=params["output_len"],
        num_prompts=num_prompts,
        concurrency=concurrency,
    )


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "image": {"type": "str", "required": True},
            "base_url": {"type": "str", "required": True},
            "served_model_name": {"type": "str", "required": True},
            "tokenizer": {"type": "path", "required": True},
            "api_key": {"type": "str", "no_log": True},
            "ca_path": {"type": "path"},
            "concurrencies": {"type": "list", "elements": "int", "required": True},
            "input_len": {"type": "int", "default": 1024},
            "output_len": {"type": "int", "default": 128},
            "num_prompts": {"type": "int"},
            "min_output_throughput": {"type": "float"},
            "timeout": {"type": "int", "default": 1800},
            "docker_path": {"type": "str", "default": "docker"},
        },
        supports_check_mode=True,
    )
    params = module.params
    bad = [f"{name} is {params[name]}" for name in ("input_len", "output_len", "timeout") if params[name] < 1]
    bad += [f"concurrencies holds {value}" for value in params["concurrencies"] if value < 1]
    bad += ["concurrencies is empty"] if not params["concurrencies"] else []
    bad += [f"num_prompts is {params['num_prompts']}"] if params["num_prompts"] is not None and params["num_prompts"] < 1 else []
    if bad:
        module.fail_json(msg=f"{'; '.join(bad)}: give whole numbers of at least 1.")
    if module.check_mode:
        module.exit_json(changed=False, skipped=True, results=[], msg="check mode runs no benchmark")
    params["docker_path"] = module.get_bin_path(params["docker_path"], required=True)
    timeout_path = module.get_bin_path("timeout", required=True)
    results: list[dict[str, Any]] = []
    for concurrency in params["concurrencies"]:
        num_prompts = params["num_prompts"] or max(10, 10 * concurrency)
        name = container_name()
        argv = container_argv(params, name, concurrency, num_prompts)
        rc, out, err, stopped = run_bounded(
            module.run_command, timeout_path, params["timeout"], argv, time.monotonic, environ_update={"OPENAI_API_KEY": params["api_key"] or "", "LC_ALL": "C"}
        )
        if stopped:
            run_bounded(module.run_command, timeout_path, 60, [params["docker_path"], "rm", "-f", name], time.monotonic)
            shown = timeout_message([*argv[:12], "..."], params["timeout"])
            module.fail_json(msg=f"{shown} at concurrency {concurrency}; its container is removed", results=results)
        runs = parse_bench_serve(out)
        problem = run_problem(runs, rc, concurrency, num_prompts, out + err)
        if problem:
            module.fail_json(msg=problem, results=results, stdout_lines=out.splitlines()[-40:], stderr_lines=err.splitlines()[-40:])
        results.append({"concurrency": concurrency, "num_prompts": num_prompts, **{key: value for key, value in runs[-1].items() if key != "complete"}})
    problem = floor_problem(results, params["min_output_throughput"])
    if problem:
        module.fail_json(msg=problem, results=results)
    module.exit_json(changed=False, skipped=False, results=results)


if __name__ == "__main__":
    main()
