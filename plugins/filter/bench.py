# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""vLLM's serving benchmark, read from its output and shown as a table."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_bench import bench_table, parse_bench_serve


def vllm_bench_results(text):
    """Every result block `vllm bench serve` printed in this text, in order."""
    if not isinstance(text, str):
        raise AnsibleFilterError(f"vllm_bench_results: expected the benchmark's output as a string, got {type(text).__name__}")
    return parse_bench_serve(text)


def vllm_bench_table(results):
    """Aligned lines, one per concurrency, from vllm_bench_serve's results (or vllm_bench_results)."""
    if not isinstance(results, list) or not all(isinstance(run, dict) for run in results):
        raise AnsibleFilterError(f"vllm_bench_table: expected a list of benchmark results, got {type(results).__name__}")
    return bench_table(results)


class FilterModule:
    def filters(self):
        return {"vllm_bench_results": vllm_bench_results, "vllm_bench_table": vllm_bench_table}
