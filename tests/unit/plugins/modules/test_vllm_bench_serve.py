"""vllm_bench_serve in-process: real benchmark outputs (module_utils/fixtures/vllm_bench) as each run's stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_bench import bench_argv
from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_bench_serve

from .module_harness import FakeCommands, ModuleFail, RecordingCommands, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm_bench"
ARGS = {
    "image": "sparkinfer-lab-vllm:latest",
    "base_url": "http://192.168.183.11:8000",
    "served_model_name": "tiny-qwen3-moe",
    "tokenizer": "/opt/sparkinfer/models/tiny-qwen3-moe",
    "api_key": "sk-the-key",
    "concurrencies": [1, 2],
    "input_len": 32,
    "output_len": 8,
    "num_prompts": 6,
    "timeout": 600,
}


def output(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


@pytest.fixture(autouse=True)
def named_containers(monkeypatch):
    """Each run's container is named sparkinfer-bench-run0, -run1 ... instead of a random suffix."""
    count = iter(range(100))
    monkeypatch.setattr(vllm_bench_serve, "container_name", lambda: f"sparkinfer-bench-run{next(count)}")


def run_argv(concurrency: int, name: str, num_prompts: int = 6) -> tuple[str, ...]:
    docker = [
        "/usr/bin/docker",
        "run",
        "--rm",
        "--init",
        "--name",
        f"sparkinfer-bench-{name}",
        "--network",
        "host",
        "--entrypoint",
        "vllm",
        "--env",
        "OPENAI_API_KEY",
        "--volume",
        "/opt/sparkinfer/models/tiny-qwen3-moe:/run/sparkinfer/tokenizer:ro",
        "sparkinfer-lab-vllm:latest",
    ]
    bench = bench_argv(
        base_url=ARGS["base_url"],
        model="tiny-qwen3-moe",
        tokenizer="/run/sparkinfer/tokenizer",
        input_len=32,
        output_len=8,
        num_prompts=num_prompts,
        concurrency=concurrency,
    )
    return ("/usr/bin/timeout", "--kill-after=10", "600", *docker, *bench)


def test_one_run_per_concurrency_with_the_key_in_the_environment_only():
    commands = RecordingCommands(
        {
            run_argv(1, "run0"): (0, output("lab-0.32.0-module-argv-concurrency-1"), ""),
            run_argv(2, "run1"): (0, output("lab-0.32.0-module-argv-concurrency-2"), ""),
        }
    )
    result = run_module(vllm_bench_serve.main, ARGS, commands)
    assert (result["changed"], result["skipped"]) == (False, False)
    assert [(run["concurrency"], run["num_prompts"], run["max_concurrency"], run["completed"], run["failed"]) for run in result["results"]] == [
        (1, 6, 1, 6, 0),
        (2, 6, 2, 6, 0),
    ]
    assert all("sk-the-key" not in " ".join(call) for call in commands.calls)
    assert [kwargs["environ_update"]["OPENAI_API_KEY"] for kwargs in commands.kwargs] == ["sk-the-key", "sk-the-key"]


def test_failed_requests_fail_the_run_naming_its_concurrency():
    commands = FakeCommands({run_argv(1, "run0"): (0, output("lab-0.32.0-wrong-api-key"), "")})
    with pytest.raises(ModuleFail) as failed:
        run_module(vllm_bench_serve.main, {**ARGS, "concurrencies": [1]}, commands)
    assert failed.value.result["msg"].startswith("vllm bench serve at concurrency 1")
    assert failed.value.result["results"] == []


def test_a_run_over_its_timeout_is_stopped_and_its_container_removed():
    commands = FakeCommands(
        {
            run_argv(1, "run0"): (124, "", ""),
            ("/usr/bin/timeout", "--kill-after=10", "60", "/usr/bin/docker", "rm", "-f", "sparkinfer-bench-run0"): (0, "", ""),
        }
    )
    with pytest.raises(ModuleFail) as failed:
        run_module(vllm_bench_serve.main, {**ARGS, "concurrencies": [1]}, commands)
    assert "did not finish within 600 s and was stopped at concurrency 1; its container is removed" in failed.value.result["msg"]
    assert len(commands.calls) == 2


def test_the_floor_fails_after_every_run_returning_them():
    commands = FakeCommands(
        {
            run_argv(1, "run0"): (0, output("lab-0.32.0-module-argv-concurrency-1"), ""),
            run_argv(2, "run1"): (0, output("lab-0.32.0-module-argv-concurrency-2"), ""),
        }
    )
    with pytest.raises(ModuleFail) as failed:
        run_module(vllm_bench_serve.main, {**ARGS, "min_output_throughput": 100000.0}, commands)
    assert "at concurrency 2 is below the floor of 100000 tok/s" in failed.value.result["msg"]
    assert [run["concurrency"] for run in failed.value.result["results"]] == [1, 2]


def test_check_mode_runs_nothing():
    result = run_module(vllm_bench_serve.main, {**ARGS, "_ansible_check_mode": True}, FakeCommands({}))
    assert (result["skipped"], result["results"]) == (True, [])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"concurrencies": [1, 0]}, "concurrencies holds 0"),
        ({"concurrencies": []}, "concurrencies is empty"),
        ({"output_len": 0}, "output_len is 0"),
        ({"num_prompts": 0}, "num_prompts is 0"),
    ],
)
def test_counts_below_one_are_refused(change, message):
    with pytest.raises(ModuleFail) as failed:
        run_module(vllm_bench_serve.main, {**ARGS, **change}, FakeCommands({}))
    assert message in failed.value.result["msg"]


def test_without_num_prompts_ten_requests_go_to_each_unit_of_concurrency():
    args = {key: value for key, value in ARGS.items() if key != "num_prompts"}
    commands = FakeCommands({run_argv(2, "run0", num_prompts=20): (0, output("lab-0.32.0-module-argv-concurrency-2"), "")})
    result = run_module(vllm_bench_serve.main, {**args, "concurrencies": [2]}, commands)
    assert result["results"][0]["num_prompts"] == 20
