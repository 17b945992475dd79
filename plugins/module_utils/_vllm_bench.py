# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""vLLM's serving benchmark (`vllm bench serve`, before it `benchmarks/benchmark_serving.py`), read from what it prints.

It ends each run with a block (vllm/benchmarks/serve.py prints it with "{:<40} {:<10}" rows):

    ============ Serving Benchmark Result ============
    Successful requests:                     100
    Maximum request concurrency:             8
    Benchmark duration (s):                  30.11
    ...
    Output token throughput (tok/s):         851.42
    ---------------Time to First Token----------------
    Mean TTFT (ms):                          95.12
    Median TTFT (ms):                        90.40
    P99 TTFT (ms):                           210.33
    ...
    ==================================================

A paste may hold several runs one after another, log noise around them, or a block cut short (then
``complete`` is false). Before each run the tool prints its settings, ``Maximum request concurrency: 8``
among them: a block that does not repeat the line takes the concurrency from there.

No I/O here.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

# The block's rows: the label as printed -> the key it is reported as.
ROWS = {
    "Successful requests": "completed",
    "Failed requests": "failed",
    "Maximum request concurrency": "max_concurrency",
    "Request rate configured (RPS)": "request_rate",
    "Benchmark duration (s)": "duration_s",
    "Total input tokens": "input_tokens",
    "Total generated tokens": "output_tokens",
    "Request throughput (req/s)": "request_throughput",
    "Output token throughput (tok/s)": "output_throughput",
    "Peak output token throughput (tok/s)": "peak_output_throughput",
    "Peak concurrent requests": "peak_concurrent_requests",
    "Total token throughput (tok/s)": "total_token_throughput",
}
# The latency sections' rows: "<Mean|Median|P<n>> <metric> (ms):".
METRICS = {"TTFT": "ttft_ms", "TPOT": "tpot_ms", "ITL": "itl_ms", "E2EL": "e2el_ms"}

_BLOCK_START = re.compile(r"=+ Serving Benchmark Result =+")
# The closing rule: 50 "=" at the end of a line (after a "# ", in a paste).
_BLOCK_END = re.compile(r"={50}\s*$")
_ROW = re.compile(r"(?P<label>[A-Za-z][A-Za-z0-9 ()/._-]*?):\s+(?P<value>\d+(?:\.\d+)?)\s*$")
_METRIC_ROW = re.compile(r"(?P<stat>Mean|Median|P\d+(?:\.\d+)?) (?P<metric>[A-Z0-9]+) \(ms\)$")
# The older tool's (benchmark_serving.py) name of the total token throughput row.
_OLD_TOTAL = "Total Token throughput (tok/s)"


def _row(line: str) -> tuple[str, str | None, int | float] | None:
    """(key, statistic or None, value) of a known `Label:  value` row in the line (after a "# " of a paste, say), or None."""
    match = _ROW.search(line)
    if match is None:
        return None
    label, text = match.group("label").strip(), match.group("value")
    value = float(text) if "." in text else int(text)
    if label == _OLD_TOTAL:
        label = "Total token throughput (tok/s)"
    if label in ROWS:
        return ROWS[label], None, value
    metric = _METRIC_ROW.match(label)
    if metric and metric.group("metric") in METRICS:
        return METRICS[metric.group("metric")], metric.group("stat").lower(), value
    return None


def parse_bench_serve(text: str | Iterable[str]) -> list[dict[str, Any]]:
    """Every result block in the output, in order: its rows by key, its latencies by metric and statistic."""
    lines = text.splitlines() if isinstance(text, str) else list(text)
    runs: list[dict[str, Any]] = []
    announced: int | float | None = None
    current: dict[str, Any] | None = None
    for line in lines:
        if _BLOCK_START.search(line):
            current = {"complete": False}
            if announced is not None:
                current["max_concurrency"] = announced
            runs.append(current)
            continue
        if current is not None and _BLOCK_END.search(line):
            current["complete"] = True
            current = None
            announced = None
            continue
        row = _row(line)
        if row is None:
            continue
        key, stat, value = row
        if current is None:
            if key == "max_concurrency":
                announced = value
        elif stat is None:
            current[key] = value
        else:
            current.setdefault(key, {})[stat] = value
    return runs


def bench_argv(*, base_url: str, model: str, tokenizer: str, input_len: int, output_len: int, num_prompts: int, concurrency: int) -> list[str]:
    """`bench serve ...` (after the `vllm` entrypoint) for one run of the random dataset at one concurrency."""
    return [
        "bench",
        "serve",
        "--backend",
        "openai",
        "--base-url",
        base_url,
        "--endpoint",
        "/v1/completions",
        "--model",
        model,
        "--tokenizer",
        tokenizer,
        "--dataset-name",
        "random",
        "--random-input-len",
        str(input_len),
        "--random-output-len",
        str(output_len),
        "--ignore-eos",
        "--num-prompts",
        str(num_prompts),
        "--max-concurrency",
        str(concurrency),
        "--percentile-metrics",
        "ttft,tpot,itl,e2el",
        "--metric-percentiles",
        "50,90,99",
        "--disable-tqdm",
    ]


def _tail(output: str, lines: int = 6) -> str:
    kept = [line.strip() for line in output.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "nothing"


def run_problem(runs: list[dict[str, Any]], rc: int, concurrency: int, num_prompts: int, output: str) -> str | None:
    """Why one run's result cannot be reported, or None: no complete block, or requests that failed."""
    if not runs or not runs[-1]["complete"]:
        return (
            f"vllm bench serve at concurrency {concurrency} printed no complete result (rc={rc}); its last lines: {_tail(output)}. "
            "A 401 means the API key differs from the server's; a connection refused, that the endpoint is down (status.yml)."
        )
    run = runs[-1]
    failed = run.get("failed", num_prompts - run.get("completed", 0))
    if failed:
        errors = [line.strip() for line in output.splitlines() if line.startswith("Error ")][:3]
        why = (
            "The server refused the API key: the key the benchmark sends (vllm_serve_api_key, or the file vllm_serve_api_key_file) "
            "differs from the one the server was started with."
            if any(error.endswith("Unauthorized") for error in errors)
            else "Read the server's log (docker logs on the head) for why."
        )
        return f"vllm bench serve at concurrency {concurrency}: {failed} of {num_prompts} requests failed{': ' + ' | '.join(errors) if errors else ''}. {why}"
    return None


def floor_problem(results: list[dict[str, Any]], floor: float | None) -> str | None:
    """Why the run at the highest concurrency is below the output throughput floor, or None."""
    if floor is None or not results:
        return None
    top = max(results, key=lambda run: run["concurrency"])
    got = top.get("output_throughput", 0.0)
    if got >= floor:
        return None
    return (
        f"output token throughput {got:.2f} tok/s at concurrency {top['concurrency']} is below the floor of {floor:g} tok/s: "
        "the server serves, but slower than this deployment requires (a changed image, spec or recipe, or a node that throttles)."
    )


def _latency(run: dict[str, Any], metric: str) -> str:
    stats = run.get(metric) or {}
    # The median is the p50: vLLM prints its Median row always, and a P50 row (the same value) only when asked.
    shown = [stats.get(stat) for stat in ("mean", "median", "p99")]
    return " / ".join("-" if value is None else f"{value:.2f}" for value in shown)


def bench_table(results: list[dict[str, Any]]) -> list[str]:
    """The results as aligned rows a person reads at a glance: one line per concurrency, under a header."""
    rows = [("concurrency", "requests", "req/s", "output tok/s", "TTFT mean / p50 / p99 ms", "ITL mean / p50 / p99 ms")]
    for run in results:
        rows.append(
            (
                str(run.get("concurrency", run.get("max_concurrency", "-"))),
                str(run.get("completed", "-")),
                f"{run['request_throughput']:.2f}" if "request_throughput" in run else "-",
                f"{run['output_throughput']:.2f}" if "output_throughput" in run else "-",
                _latency(run, "ttft_ms"),
                _latency(run, "itl_ms"),
            )
        )
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
