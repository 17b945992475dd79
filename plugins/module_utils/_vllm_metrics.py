# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The few figures of vLLM's Prometheus metrics a person checks first, from samples a text-format parser yielded.

Parsing the exposition format is left to a well-kept parser (prometheus_client's, in the filter plugin); this module
only picks and adds up vLLM's series. A sample is (name, labels, value), as the parser's Sample has them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

# vLLM's series, by the sample names its /metrics answers with (vllm/v1/metrics/loggers.py).
RUNNING = "vllm:num_requests_running"
WAITING = "vllm:num_requests_waiting"
# vLLM 0.10 renamed the KV-cache gauge; older servers answer only the first name, a fraction of 1 in both.
KV_CACHE_USAGE = ("vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc")
PROMPT_TOKENS = "vllm:prompt_tokens_total"
GENERATION_TOKENS = "vllm:generation_tokens_total"


def summarize_vllm_metrics(samples: Iterable[tuple[str, Mapping[str, str], float]]) -> dict:
    """Requests running and waiting, KV-cache usage and the token counters, over every engine and model served.

    Requests and tokens are summed over the engines (data-parallel ranks) and models; the KV-cache usage is the
    fullest engine's, the one that refuses the next request first. A series the server did not answer, or answered only
    with NaN or an infinity, is None.
    """
    sums: dict[str, float] = {}
    kv_usage: dict[str, list[float]] = {name: [] for name in KV_CACHE_USAGE}
    seen_vllm = False
    for name, _labels, value in samples:
        if not name.startswith("vllm:"):
            continue
        seen_vllm = True
        # The text format allows NaN and +Inf: such a sample says nothing countable, and the figure stays unknown.
        if not math.isfinite(value):
            continue
        if name in kv_usage:
            kv_usage[name].append(value)
        elif name in (RUNNING, WAITING, PROMPT_TOKENS, GENERATION_TOKENS):
            sums[name] = sums.get(name, 0.0) + value
    usage = next((values for values in kv_usage.values() if values), [])
    return {
        "vllm": seen_vllm,
        "requests_running": _count(sums.get(RUNNING)),
        "requests_waiting": _count(sums.get(WAITING)),
        "kv_cache_usage": max(usage) if usage else None,
        "prompt_tokens": _count(sums.get(PROMPT_TOKENS)),
        "generation_tokens": _count(sums.get(GENERATION_TOKENS)),
    }


def metrics_line(summary: Mapping) -> str:
    """One line of a summary for the status table."""

    def shown(value):
        return "?" if value is None else str(value)

    usage = summary.get("kv_cache_usage")
    return (
        f"{shown(summary.get('requests_running'))} running, {shown(summary.get('requests_waiting'))} waiting, "
        f"KV cache {'?' if usage is None else f'{usage * 100:.1f}%'} used, "
        f"{shown(summary.get('prompt_tokens'))} prompt and {shown(summary.get('generation_tokens'))} generated tokens "
        "since start"
    )


def _count(value: float | None) -> int | None:
    return None if value is None else round(value)
