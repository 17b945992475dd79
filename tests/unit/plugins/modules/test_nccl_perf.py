"""nccl_perf end to end in-process: real nccl-tests outputs (fixtures/nccl/SOURCES.md) as the command's stdout."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import nccl_perf

from .module_harness import FakeCommands, ModuleFail, RecordingCommands, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "nccl"
ARGV = [
    "mpirun",
    "-np",
    "2",
    "-H",
    "spark-1:1,spark-2:1",
    "-x",
    "NCCL_DEBUG=INFO",
    "/opt/nccl-tests/build/all_gather_perf",
    "-b",
    "16G",
    "-e",
    "16G",
    "-f",
    "2",
]
TIMEOUT = "/usr/bin/timeout"


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.txt").read_text(encoding="utf-8")


def wrapped(argv: list[str], timeout: int = 600) -> tuple[str, ...]:
    return (TIMEOUT, "--kill-after=10", str(timeout), *argv)


def test_a_passing_run_returns_its_facts_and_the_environment_it_ran_with():
    commands = RecordingCommands({wrapped(ARGV): (0, fixture("2.18.5-all-gather-16g-gb10-pass"), "")})
    result = run_module(nccl_perf.main, {"argv": ARGV, "environment": {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1", "NCCL_IB_DISABLE": 0}}, commands)
    facts = result["nccl_perf"]
    assert result["changed"] is False
    assert (result["problems"], result["rc"], result["cmd"]) == ([], 0, list(wrapped(ARGV)))
    assert (facts["test"], facts["busbw_at_largest_gbps"], facts["avg_bus_bandwidth_gbps"], facts["hosts"]) == (
        "all_gather_perf",
        22.98,
        22.9611,
        ["promaxgb10-4c75", "promaxgb10-4c99"],
    )
    assert result["tail"][-3:] == ["#", "# Collective test concluded: all_gather_perf", "#"]
    assert commands.calls == [wrapped(ARGV)]
    assert commands.kwargs == [{"environ_update": {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1", "NCCL_IB_DISABLE": "0", "LC_ALL": "C"}}]


def test_debug_info_output_reports_the_ib_transport_and_hcas():
    commands = FakeCommands({wrapped(ARGV, 120): (0, fixture("2.18.3-all-gather-1g-gb10-debug-info-net-ib"), "")})
    facts = run_module(nccl_perf.main, {"argv": ARGV, "timeout": 120}, commands)["nccl_perf"]
    assert (facts["transport"], facts["socket_fallback"]) == ("NET/IB", False)
    assert [hca["device"] for hca in facts["ib_hcas"]] == ["rocep1s0f1", "roceP2p1s0f1"]


def test_under_the_threshold_fails_with_the_causes_and_keeps_the_facts():
    commands = FakeCommands({wrapped(ARGV): (0, fixture("2.18.3-all-gather-1g-4g-gb10-direct-2.8gbps"), "")})
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"argv": ARGV}, commands)
    result = failure.value.result
    assert result["msg"].startswith("bus bandwidth 2.83 GB/s at 4 GiB is below 21.875 GB/s")
    assert "About 3 GB/s on a Spark pair means the wrong HCA or an NCCL build" in result["msg"]
    assert result["problems"] == [result["msg"]]
    assert result["nccl_perf"]["avg_bus_bandwidth_gbps"] == 2.82151
    assert result["changed"] is False


def test_a_lower_floor_lets_the_same_run_pass():
    result = run_module(nccl_perf.main, {"output": fixture("2.18.3-all-gather-1g-4g-gb10-direct-2.8gbps"), "min_busbw_gbps": 2.5})
    assert result["problems"] == []


def test_socket_fallback_fails_unless_allowed():
    output = fixture("2.x-all-reduce-2-node-rtx4090-net-socket-excerpt")
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"output": output})
    result = failure.value.result
    assert result["msg"].startswith("(1) NCCL moved the data over TCP sockets (NET/Socket) instead of RoCE")
    assert " (2) the nccl-tests command printed no result rows" in result["msg"]
    assert result["nccl_perf"]["socket_fallback"] is True
    assert (result["rc"], result["cmd"]) == (None, None)
    with pytest.raises(ModuleFail) as allowed:
        run_module(nccl_perf.main, {"output": output, "allow_socket_transport": True})
    assert allowed.value.result["problems"] == [allowed.value.result["msg"]]
    assert allowed.value.result["msg"].startswith("the nccl-tests command printed no result rows")


def test_a_timeout_kills_and_says_why_it_likely_hung():
    partial = "\n".join(fixture("2.18.3-all-gather-1g-gb10-debug-info-net-ib").splitlines()[:40])
    commands = FakeCommands({wrapped(ARGV, 30): (124, partial, "")})
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"argv": ARGV, "timeout": 30}, commands)
    result = failure.value.result
    assert result["msg"].startswith("all_gather_perf did not finish within 30 s and was killed. A run that hangs is most often a hung NCCL init")
    assert "NCCL_IB_HCA names an HCA that is down or not cabled" in result["msg"]
    assert "a firewall drops the TCP ports" in result["msg"]
    assert result["rc"] == 124
    assert result["nccl_perf"]["ib_hcas"][0]["device"] == "rocep1s0f1"
    assert len(result["tail"]) == 20


def test_sigkill_after_the_deadline_is_a_timeout_and_before_it_is_not():
    ticks = iter([100.0, 131.0])
    commands = FakeCommands({wrapped(ARGV, 30): (137, "", "")})
    with pytest.raises(ModuleFail) as late:
        run_module(functools.partial(nccl_perf.main, clock=lambda: next(ticks)), {"argv": ARGV, "timeout": 30}, commands)
    assert late.value.result["msg"].startswith("all_gather_perf did not finish within 30 s and was killed.")
    with pytest.raises(ModuleFail) as early:
        run_module(nccl_perf.main, {"argv": ARGV, "timeout": 30}, commands)
    assert early.value.result["msg"].startswith("all_gather_perf exited with rc=137 (killed by SIGKILL: on a Spark's unified memory a 16 GiB buffer")


def test_a_failing_command_reports_rc_and_its_error():
    stderr = "ssh: connect to host 192.168.100.16 port 22: Connection timed out\n"
    commands = FakeCommands({wrapped(ARGV): (255, "", stderr)})
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"argv": ARGV}, commands)
    result = failure.value.result
    assert result["msg"] == "all_gather_perf exited with rc=255: ssh: connect to host 192.168.100.16 port 22: Connection timed out."
    assert result["rc"] == 255
    assert result["tail"] == ["", stderr.strip()]


def test_wrong_values_fail_even_when_the_command_succeeded():
    commands = FakeCommands({wrapped(ARGV): (0, fixture("2.x-all-reduce-2-node-wrong-values-excerpt"), "")})
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"argv": ARGV, "min_busbw_gbps": 0}, commands)
    assert failure.value.result["msg"].startswith("the result table counts 210 wrong value(s) (#wrong)")


def test_output_mode_parses_without_running_anything():
    commands = FakeCommands({})
    result = run_module(nccl_perf.main, {"output": fixture("2.19.6-all-gather-512m-16g-gb10-both-twins")}, commands)
    assert commands.calls == []
    assert (result["nccl_perf"]["busbw_at_largest_gbps"], result["nccl_perf"]["largest_size_bytes"], result["rc"]) == (24.2, 17179869184, None)


def test_old_outputs_take_the_test_name_from_the_command():
    argv = ["/opt/nccl-tests/build/all_reduce_perf", "-b", "32M", "-e", "8G", "-f", "2", "-g", "1"]
    commands = FakeCommands({wrapped(argv): (0, fixture("2.x-legacy-all-reduce-4x-k80-error-column"), "")})
    result = run_module(nccl_perf.main, {"argv": argv, "min_busbw_gbps": 0}, commands)
    assert result["nccl_perf"]["test"] == "all_reduce_perf"
    assert result["nccl_perf"]["max_error"] == 2e-07


def test_unparsable_output_fails_with_the_reason():
    text = fixture("2.18.5-all-gather-16g-gb10-pass")
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, {"output": text + text})
    assert failure.value.result["msg"] == (
        "cannot parse the nccl-tests output: the output holds more than one result table: run one nccl-tests command at a time"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"argv": []}, "argv is empty: give the nccl-tests command to run"),
        ({"argv": ARGV, "timeout": 0}, "timeout must be a positive number of seconds, not 0"),
        ({"argv": ARGV, "output": "x"}, "parameters are mutually exclusive: argv|output"),
        ({}, "one of the following is required: argv, output"),
    ],
)
def test_bad_arguments_are_refused(args, message):
    with pytest.raises(ModuleFail) as failure:
        run_module(nccl_perf.main, args, FakeCommands({}))
    assert failure.value.result["msg"] == message
