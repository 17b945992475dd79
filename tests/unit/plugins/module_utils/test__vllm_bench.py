"""The serving benchmark's reader, on real outputs (fixtures/vllm_bench/SOURCES.md), and what the module builds around it.

The expected values were read off each file by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_bench import bench_argv, bench_table, floor_problem, parse_bench_serve, run_problem

FIXTURES = Path(__file__).parent / "fixtures" / "vllm_bench"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def headline(run: dict) -> tuple:
    """What a person reads first: complete, concurrency, requests done and failed, output tok/s, TTFT median and P99, ITL mean and P99."""
    return (
        run["complete"],
        run.get("max_concurrency"),
        run.get("completed"),
        run.get("failed"),
        run.get("output_throughput"),
        run["ttft_ms"]["median"],
        run["ttft_ms"]["p99"],
        run["itl_ms"]["mean"],
        run["itl_ms"]["p99"],
    )


PUBLIC = {
    "0.23.0-dgx-spark-gb10-mtp-specdecode-percentiles-markdown": [(True, None, 200, 0, 132.35, 1608.29, 4152.70, 240.09, 1551.99)],
    "0.26.0-dgx-spark-gb10-reasoning-rate0.2-percentiles-e2el-fulllog": [(True, None, 50, 0, 184.45, 601.74, 871.84, 147.53, 184.90)],
    "unknown-a100-benchmark_serving-oldformat-serverlog-fragments": [(True, None, 10, None, 218.04, 2244.91, 3346.14, 43.77, 51.04)],
    "unknown-ascend-npu-four-runs-c64-failed-requests-wrapper-noise": [
        (True, 64, 128, 0, 164.00, 9929.60, 76628.39, 333.19, 3352.56),
        (True, 64, 65, 63, 266.38, 30123.23, 76697.71, 200.38, 2682.30),
        (True, 64, 128, 0, 185.18, 8495.56, 74534.91, 296.08, 2848.53),
        (True, 64, 65, 63, 275.21, 32938.48, 74620.85, 182.45, 2377.90),
    ],
    "unknown-gaudi-hpu-benchmark_serving-c1-c2-c4-p10-p90-p99-e2el-lmeval-noise": [
        (True, 1, 8, None, 7.45, 9688.38, 21763.63, 74.91, 227.87),
        (True, 2, 16, None, 22.74, 5364.18, 13629.35, 52.47, 150.60),
        (True, 4, 32, None, 27.86, 5211.63, 22728.78, 110.88, 3989.14),
    ],
    "unknown-issue12845-inline-paste-no-fence-no-trailing-spaces": [(True, None, 772, None, 529.33, 201.98, 953.35, 105.85, 340.52)],
    "unknown-pr33743-vllm-bench-serve-cmd-failed-peak-no-maxconc": [(True, None, 16, 0, 268.31, 2648.65, 4610.48, 51.78, 258.31)],
    "unknown-rocm-atom-pr466-labelled-con64-maxconc": [(True, 64, 640, 0, 2027.82, 192.92, 1529.61, 29.22, 165.05)],
    # Three cut pastes of two sections come first, outside any result block: only the three runs count.
    "unknown-rtx5090-uvm-partial-blocks-then-three-runs-namespace-noise": [
        (True, None, 100, None, 190.40, 9066.78, 14937.16, 191.40, 1299.17),
        (True, None, 100, None, 149.56, 10330.52, 16549.02, 247.34, 1077.62),
        (True, None, 100, None, 183.28, 5419.23, 7933.22, 194.62, 467.74),
    ],
    # Every line behind "# ", the concurrency announced before each run only.
    "unknown-two-runs-c32-hash-commented-in-shell-script": [
        (True, 32, 32, None, 434.40, 7099.88, 10999.46, 70.14, 72.47),
        (True, 32, 32, None, 329.86, 6272.98, 10709.26, 93.85, 97.38),
    ],
}


LAB = {
    "lab-0.32.0-module-argv-concurrency-1": [(True, 1, 6, 0, 193.41, 10.99, 44.60, 3.29, 7.16)],
    "lab-0.32.0-module-argv-concurrency-2": [(True, 2, 6, 0, 491.71, 11.71, 26.90, 2.27, 4.30)],
    "lab-0.32.0-default-metrics-no-max-concurrency": [(True, None, 4, 0, 600.62, 34.43, 35.39, 2.41, 3.87)],
    "lab-0.32.0-wrong-api-key": [(True, 1, 0, 2, 0.00, 0.00, 0.00, 0.00, 0.00)],
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_every_public_run_is_read_as_a_person_reads_it(name):
    runs = parse_bench_serve(read(f"public/{name}.txt"))
    assert [headline(run) for run in runs] == PUBLIC[name]


@pytest.mark.parametrize("name", sorted(LAB))
def test_every_lab_run_is_read_as_a_person_reads_it(name):
    assert [headline(run) for run in parse_bench_serve(read(f"{name}.txt"))] == LAB[name]


def test_a_wrong_api_key_is_named_as_the_reason_requests_failed():
    output = read("lab-0.32.0-wrong-api-key.txt")
    assert run_problem(parse_bench_serve(output), 0, 1, 2, output) == (
        "vllm bench serve at concurrency 1: 2 of 2 requests failed: Error 0: Unauthorized | Error 1: Unauthorized. The server "
        "refused the API key: the key the benchmark sends (vllm_serve_api_key, or the file vllm_serve_api_key_file) differs from "
        "the one the server was started with."
    )


def test_the_older_tools_total_token_row_is_the_same_row():
    (run,) = parse_bench_serve(read("public/unknown-a100-benchmark_serving-oldformat-serverlog-fragments.txt"))
    assert run["total_token_throughput"] == 436.07
    (run,) = parse_bench_serve(read("public/unknown-rocm-atom-pr466-labelled-con64-maxconc.txt"))
    assert (run["total_token_throughput"], run["peak_output_throughput"], run["peak_concurrent_requests"]) == (4117.90, 2752.00, 70.00)


def test_every_percentile_and_the_end_to_end_latency_are_kept():
    (run,) = parse_bench_serve(read("public/0.26.0-dgx-spark-gb10-reasoning-rate0.2-percentiles-e2el-fulllog.txt"))
    assert run["ttft_ms"] == {"mean": 589.45, "median": 601.74, "p50": 601.74, "p90": 755.19, "p95": 784.19, "p99": 871.84}
    # The last row is exactly 10 characters wide: no padding after it.
    assert run["e2el_ms"]["p99"] == 1017991.01
    assert (run["request_rate"], run["duration_s"], run["input_tokens"], run["output_tokens"]) == (0.20, 1134.75, 55684, 209303)
    gaudi = parse_bench_serve(read("public/unknown-gaudi-hpu-benchmark_serving-c1-c2-c4-p10-p90-p99-e2el-lmeval-noise.txt"))
    assert (gaudi[0]["ttft_ms"]["p10"], gaudi[0]["ttft_ms"]["p90"], gaudi[1]["ttft_ms"]["p10"]) == (8743.06, 20177.91, 4060.87)


def test_the_speculative_decoding_section_adds_nothing_to_the_latencies():
    (run,) = parse_bench_serve(read("public/0.23.0-dgx-spark-gb10-mtp-specdecode-percentiles-markdown.txt"))
    assert set(run) == {
        "complete",
        "completed",
        "failed",
        "request_rate",
        "duration_s",
        "input_tokens",
        "output_tokens",
        "request_throughput",
        "output_throughput",
        "peak_output_throughput",
        "peak_concurrent_requests",
        "total_token_throughput",
        "ttft_ms",
        "tpot_ms",
        "itl_ms",
        "e2el_ms",
    }


def test_a_block_cut_short_is_not_complete():
    lines = read("public/unknown-rocm-atom-pr466-labelled-con64-maxconc.txt").splitlines()
    (run,) = parse_bench_serve(lines[:16])
    assert (run["complete"], run["completed"], "itl_ms" in run) == (False, 640, False)


def test_the_table_aligns_one_line_per_run():
    runs = parse_bench_serve(read("public/unknown-gaudi-hpu-benchmark_serving-c1-c2-c4-p10-p90-p99-e2el-lmeval-noise.txt"))
    assert bench_table(runs) == [
        "concurrency  requests  req/s  output tok/s  TTFT mean / p50 / p99 ms       ITL mean / p50 / p99 ms",
        "1            8         0.04   7.45          12209.53 / 9688.38 / 21763.63  74.91 / 60.23 / 227.87",
        "2            16        0.11   22.74         6890.93 / 5364.18 / 13629.35   52.47 / 32.02 / 150.60",
        "4            32        0.13   27.86         6472.11 / 5211.63 / 22728.78   110.88 / 49.84 / 3989.14",
    ]


def test_failed_requests_and_a_missing_result_are_problems_and_a_clean_run_is_not():
    ascend = read("public/unknown-ascend-npu-four-runs-c64-failed-requests-wrapper-noise.txt")
    runs = parse_bench_serve(ascend)
    assert run_problem(runs[:1], 0, 64, 128, ascend) is None
    assert run_problem(runs[:2], 0, 64, 128, ascend).startswith("vllm bench serve at concurrency 64: 63 of 128 requests failed")
    # A run stopped as it began to print its result: the block is there, but cut.
    lab = read("lab-0.32.0-module-argv-concurrency-1.txt").splitlines()
    cut = "\n".join(lab[: next(index for index, line in enumerate(lab) if "Serving Benchmark Result" in line) + 2])
    assert run_problem(parse_bench_serve(cut), 137, 1, 6, cut) == (
        "vllm bench serve at concurrency 1 printed no complete result (rc=137); its last lines: Traffic request rate: inf | Burstiness factor: 1.0 (Poisson "
        "process) | Maximum request concurrency: 1 | tip: install termplotlib and gnuplot to plot the metrics | "
        "============ Serving Benchmark Result ============ | Successful requests:                     6. "
        "A 401 means the API key differs from the server's; a connection refused, that the endpoint is down (status.yml)."
    )


def without_the_failed_row(text: str, rows: int) -> str:
    """The real report with its `Failed requests:` rows cut out of a copy, whole lines and nothing else: still real text."""
    lines = text.splitlines()
    kept = [line for line in lines if not line.startswith("Failed requests:")]
    assert len(lines) - len(kept) == rows
    return "\n".join(kept)


def test_a_report_without_its_failed_row_is_not_read_as_none_failed():
    # The older benchmark_serving.py prints no such row, and a paste may lose it: the requests not completed failed.
    ascend = without_the_failed_row(read("public/unknown-ascend-npu-four-runs-c64-failed-requests-wrapper-noise.txt"), 4)
    runs = parse_bench_serve(ascend)
    assert [(run.get("completed"), run.get("failed")) for run in runs] == [(128, None), (65, None), (128, None), (65, None)]
    assert run_problem(runs[:1], 0, 64, 128, ascend) is None
    assert run_problem(runs[:2], 0, 64, 128, ascend).startswith("vllm bench serve at concurrency 64: 63 of 128 requests failed")
    # The lab's wrong key: 0 of 2 done ("Failed requests during benchmark run detected" is no row, and stays).
    lab = without_the_failed_row(read("lab-0.32.0-wrong-api-key.txt"), 1)
    assert "Failed requests during benchmark run detected (capping to 10):" in lab
    runs = parse_bench_serve(lab)
    assert [(run.get("completed"), run.get("failed")) for run in runs] == [(0, None)]
    assert run_problem(runs, 0, 1, 2, lab) == (
        "vllm bench serve at concurrency 1: 2 of 2 requests failed: Error 0: Unauthorized | Error 1: Unauthorized. The server "
        "refused the API key: the key the benchmark sends (vllm_serve_api_key, or the file vllm_serve_api_key_file) differs from "
        "the one the server was started with."
    )
    # A report of the older tool, which never had the row, with every request done: no problem.
    gaudi = read("public/unknown-gaudi-hpu-benchmark_serving-c1-c2-c4-p10-p90-p99-e2el-lmeval-noise.txt")
    assert run_problem(parse_bench_serve(gaudi)[:1], 0, 1, 8, gaudi) is None


def test_a_run_that_announces_no_concurrency_does_not_inherit_the_previous_runs():
    # No fixture holds such a pair: two real lab reports one after the other, as a paste of two runs holds them. The first
    # announces "Maximum request concurrency: 1" before its table, the second "None" (no limit), which is no number.
    first, second = read("lab-0.32.0-module-argv-concurrency-1.txt"), read("lab-0.32.0-default-metrics-no-max-concurrency.txt")
    runs = parse_bench_serve(first + second)
    # The second's table has no concurrency row of its own.
    assert [headline(run) for run in runs] == [
        (True, 1, 6, 0, 193.41, 10.99, 44.60, 3.29, 7.16),
        (True, None, 4, 0, 600.62, 34.43, 35.39, 2.41, 3.87),
    ]
    assert [run.get("max_concurrency") for run in runs] == [1, None]
    assert [row.split()[0] for row in bench_table(runs)[1:]] == ["1", "-"]


def test_the_floor_is_held_at_the_highest_concurrency():
    results = [{"concurrency": 1, "output_throughput": 7.45}, {"concurrency": 4, "output_throughput": 27.86}]
    assert floor_problem(results, None) is None
    assert floor_problem(results, 20) is None
    assert floor_problem(results, 30).startswith("output token throughput 27.86 tok/s at concurrency 4 is below the floor of 30 tok/s")


def test_the_argv_is_the_random_dataset_at_one_concurrency_with_every_token_generated():
    argv = bench_argv(base_url="http://10.0.0.1:8000", model="m", tokenizer="/t", input_len=32, output_len=8, num_prompts=4, concurrency=2)
    assert argv[:2] == ["bench", "serve"]

    def value(flag: str) -> str:
        return argv[argv.index(flag) + 1]

    assert (value("--base-url"), value("--max-concurrency"), value("--num-prompts"), value("--random-input-len")) == ("http://10.0.0.1:8000", "2", "4", "32")
    assert "--ignore-eos" in argv and "--disable-tqdm" in argv


def test_the_argv_is_the_command_line_the_lab_run_was_captured_with():
    # capture.sh ran `vllm bench serve` with bench_argv's flags; the run printed them back as its parsed Namespace.
    lab = read("lab-0.32.0-module-argv-concurrency-1.txt")
    line = next(line for line in lab.splitlines() if line.startswith("Namespace("))
    namespace = {name: value.strip("'") for name, value in re.findall(r"(\w+)=('[^']*'|[^,)]*)", line)}
    argv = bench_argv(base_url="http://127.0.0.1:8123", model="tiny-qwen3-moe", tokenizer="/model", input_len=32, output_len=8, num_prompts=6, concurrency=1)
    assert argv[:2] == ["bench", "serve"]
    given = {}
    for index, token in enumerate(argv[2:], 2):
        if token.startswith("--"):
            following = argv[index + 1] if index + 1 < len(argv) else "--"
            given[token[2:].replace("-", "_")] = "True" if following.startswith("--") else following
    assert given == {name: namespace[name] for name in given}
    assert given == {
        "backend": "openai",
        "base_url": "http://127.0.0.1:8123",
        "endpoint": "/v1/completions",
        "model": "tiny-qwen3-moe",
        "tokenizer": "/model",
        "dataset_name": "random",
        "random_input_len": "32",
        "random_output_len": "8",
        "ignore_eos": "True",
        "num_prompts": "6",
        "max_concurrency": "1",
        "percentile_metrics": "ttft,tpot,itl,e2el",
        "metric_percentiles": "50,90,99",
        "disable_tqdm": "True",
    }


def test_a_table_shows_the_median_as_p50_and_a_dash_for_what_a_run_did_not_print():
    # A result as vllm_bench_serve keeps it (the concurrency it asked for first), of the run that printed no limit of its
    # own; then a block cut right after its first line, which holds only the concurrency announced before it.
    (default,) = parse_bench_serve(read("lab-0.32.0-default-metrics-no-max-concurrency.txt"))
    lab = read("lab-0.32.0-module-argv-concurrency-1.txt").splitlines()
    (cut,) = parse_bench_serve(lab[: next(index for index, line in enumerate(lab) if "Serving Benchmark Result" in line) + 1])
    assert cut == {"complete": False, "max_concurrency": 1}
    assert bench_table([{"concurrency": 4, "num_prompts": 4, **default}, cut]) == [
        "concurrency  requests  req/s  output tok/s  TTFT mean / p50 / p99 ms  ITL mean / p50 / p99 ms",
        "4            4         75.08  600.62        33.76 / 34.43 / 35.39     2.41 / 2.46 / 3.87",
        "1            -         -      -             - / - / -                 - / - / -",
    ]


def test_a_table_of_runs_with_p50_rows_shows_them():
    (run,) = parse_bench_serve(read("public/0.26.0-dgx-spark-gb10-reasoning-rate0.2-percentiles-e2el-fulllog.txt"))
    assert bench_table([run])[1].split("  ")[-2:] == ["589.45 / 601.74 / 871.84", "147.53 / 149.87 / 184.90"]


def without_rows(text: str, labels: tuple, rows: int) -> str:
    """The real report with the rows of these labels cut out of a copy, whole lines and nothing else: still real text."""
    lines = text.splitlines()
    kept = [line for line in lines if not line.startswith(labels)]
    assert len(lines) - len(kept) == rows
    return "\n".join(kept)


def test_a_report_that_lost_both_request_rows_counts_every_request_as_failed():
    # The lab's wrong key with its `Successful requests:` and `Failed requests:` rows cut out: nothing says any was done.
    lab = without_rows(read("lab-0.32.0-wrong-api-key.txt"), ("Successful requests:", "Failed requests:"), 2)
    runs = parse_bench_serve(lab)
    assert ("completed" in runs[0], "failed" in runs[0], runs[0]["complete"]) == (False, False, True)
    assert run_problem(runs, 0, 1, 2, lab) == (
        "vllm bench serve at concurrency 1: 2 of 2 requests failed: Error 0: Unauthorized | Error 1: Unauthorized. The server "
        "refused the API key: the key the benchmark sends (vllm_serve_api_key, or the file vllm_serve_api_key_file) differs from "
        "the one the server was started with."
    )


def test_at_most_three_error_lines_are_quoted():
    # Two real lab reports of the wrong key one after the other, as a paste of two runs holds them: four `Error ` lines.
    lab = read("lab-0.32.0-wrong-api-key.txt")
    twice = lab + lab
    assert run_problem(parse_bench_serve(twice), 0, 1, 2, twice) == (
        "vllm bench serve at concurrency 1: 2 of 2 requests failed: Error 0: Unauthorized | Error 1: Unauthorized | Error 0: "
        "Unauthorized. The server refused the API key: the key the benchmark sends (vllm_serve_api_key, or the file "
        "vllm_serve_api_key_file) differs from the one the server was started with."
    )


def test_failed_requests_without_error_lines_point_at_the_servers_log():
    ascend = read("public/unknown-ascend-npu-four-runs-c64-failed-requests-wrapper-noise.txt")
    assert run_problem(parse_bench_serve(ascend)[:2], 0, 64, 128, ascend) == (
        "vllm bench serve at concurrency 64: 63 of 128 requests failed. Read the server's log (docker logs on the head) for why."
    )


def test_a_run_that_printed_nothing_says_so():
    assert run_problem([], 1, 2, 10, "") == (
        "vllm bench serve at concurrency 2 printed no complete result (rc=1); its last lines: nothing. "
        "A 401 means the API key differs from the server's; a connection refused, that the endpoint is down (status.yml)."
    )


def test_the_floor_is_met_by_a_throughput_equal_to_it_and_missed_below_it_with_the_reason():
    results = [{"concurrency": 1, "output_throughput": 7.45}, {"concurrency": 4, "output_throughput": 27.86}]
    assert floor_problem(results, 27.86) is None
    assert floor_problem(results, 30) == (
        "output token throughput 27.86 tok/s at concurrency 4 is below the floor of 30 tok/s: the server serves, but slower "
        "than this deployment requires (a changed image, spec or recipe, or a node that throttles)."
    )


def test_a_result_without_its_output_throughput_row_is_below_any_floor():
    # The lab's run at concurrency 1 with its `Output token throughput` row cut out: no throughput is no pass.
    (run,) = parse_bench_serve(without_rows(read("lab-0.32.0-module-argv-concurrency-1.txt"), ("Output token throughput",), 1))
    assert floor_problem([{"concurrency": 1, **run}], 0.5) == (
        "output token throughput 0.00 tok/s at concurrency 1 is below the floor of 0.5 tok/s: the server serves, but slower "
        "than this deployment requires (a changed image, spec or recipe, or a node that throttles)."
    )
