"""The vllm_wait loop on real lab logs replayed poll by poll, with a fake clock: no sleeping."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import STAGE_INDEX
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_wait import MESSAGE_LINE_CHARS, wait_for_vllm

from .corpus import CORPUS, lab_log, lines

READY = lines(lab_log("0.32.0-ready-tp1"))
REFUSED = lines(lab_log("0.32.0-unsupported-architecture"))
SHM_STALL = next(
    line
    for line in (CORPUS / "public" / "unknown-glm53-flash-4x-spark-shm-broadcast-stall.log").read_text(encoding="utf-8").splitlines()
    if "No available shared memory broadcast block" in line
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class ReplayedLog:
    """A log that grows by `per_poll` lines at each read, then (optionally) repeats `then` forever."""

    def __init__(self, lines: list[str], per_poll: int = 10, status: str | None = None, then: str | None = None) -> None:
        self.lines = lines
        self.per_poll = per_poll
        self.read = 0
        self.status = status
        self.then = then

    def read_new(self) -> list[str]:
        chunk = self.lines[self.read : self.read + self.per_poll]
        self.read += len(chunk)
        if not chunk and self.then is not None:
            return [self.then]
        return chunk

    def backlog(self) -> bool:
        return False

    def missing(self) -> str | None:
        return None

    def state(self):
        if self.status is None or self.read < len(self.lines):
            return None if self.status is None else {"status": "running", "exit_code": 0}
        return {"status": self.status, "exit_code": 1}


class WrittenLog(ReplayedLog):
    """A log already written when the wait starts, longer than one read takes: a backlog until all is read."""

    def backlog(self) -> bool:
        return self.read < len(self.lines)


class MissingLog(ReplayedLog):
    def __init__(self) -> None:
        super().__init__([])

    def missing(self) -> str | None:
        return "/var/log/vllm/serve.log does not exist"


def wait(log, clock, **kwargs):
    return wait_for_vllm(log, clock=clock, sleep=clock.sleep, **{"poll_interval": 1.0, **kwargs})


def line_number(lines: list[str], text: str) -> int:
    return next(index for index, line in enumerate(lines) if text in line)


def test_ready_log_passes_with_stage_timings():
    clock = FakeClock()
    result = wait(ReplayedLog(READY), clock, expect={"architecture": "Qwen3MoeForCausalLM", "quantization": None})
    assert (result.ok, result.reason) == (True, None)
    assert result.facts["outcome"] == "ready"
    seconds = list(result.stage_seconds.values())
    assert seconds == sorted(seconds)
    assert result.stage_seconds["ready"] == result.elapsed
    assert len(result.tail) == 20


def test_gate_fails_at_the_resolved_architecture_poll():
    clock = FakeClock()
    result = wait(ReplayedLog(READY), clock, expect={"architecture": "Qwen3_5MoeForConditionalGeneration"})
    assert (result.ok, result.reason) == (False, "gate")
    assert "architecture='Qwen3MoeForCausalLM'" in result.message
    assert "Qwen3_5MoeForConditionalGeneration" in result.message
    polls_to_arch = line_number(READY, "Resolved architecture") // 10
    assert result.elapsed == polls_to_arch
    assert result.facts["stage"] == "architecture_resolved"


def test_gate_on_quantization_waits_for_the_engine_config():
    clock = FakeClock()
    result = wait(ReplayedLog(READY), clock, expect={"quantization": "fp8"})
    assert result.reason == "gate"
    assert "quantization=None" in result.message
    assert result.elapsed == line_number(READY, "Initializing a V1 LLM engine") // 10


def test_a_contradiction_names_where_its_expectation_came_from():
    result = wait(ReplayedLog(READY), FakeClock(), expect={"quantization": "fp8"}, expect_sources={"quantization": "recipe qwen3.5-122b-a10b-fp8"})
    assert "the log says quantization=None, the gate expects quantization='fp8' (from recipe qwen3.5-122b-a10b-fp8)." in result.message


def test_a_ray_worker_whose_nccl_fell_back_to_sockets_fails_the_rdma_gate_at_that_line_naming_the_fix():
    clock = FakeClock()
    log = lines(CORPUS / "public" / "0.11.1rc2.dev141+g38f225c2a-gpt-oss-20b-ray-tp2-two-node-rccl-init.log")
    result = wait(ReplayedLog(log, per_poll=1), clock, expect={"nccl_transport": "NET/IB"})
    assert (result.ok, result.reason) == (False, "gate")
    assert "the log says nccl_transport='NET/Socket', the gate expects nccl_transport='NET/IB'" in result.message
    assert "vllm_serve_rdma" in result.message
    # The first channel between the nodes, not NCCL's earlier choice of network (one node names one too).
    assert result.elapsed == line_number(log, "[receive] via NET/Socket/0")


@pytest.mark.parametrize(
    "log",
    [
        "unknown-dgx-spark-x2-ray-nccl-ibext-v10-roce-channels-excerpt.log",
        "unknown-deepseek-v2.5-ray-2x8-nccl-p2p-and-net-ib-gdrdma-channels-excerpt.log",
    ],
)
def test_nccl_on_roce_passes_the_rdma_gate_through_its_own_or_hpcx_plugin_transport(log):
    clock = FakeClock()
    result = wait(ReplayedLog(lines(CORPUS / "public" / log)), clock, expect={"nccl_transport": "NET/IB"}, timeout=5)
    # Not a gate failure: the excerpts end before vLLM starts, so the wait runs out of time.
    assert (result.ok, result.reason, result.facts["nccl_transport"][:6]) == (False, "timeout", "NET/IB")


def test_a_log_without_nccl_lines_never_contradicts_the_transport():
    clock = FakeClock()
    result = wait(ReplayedLog(READY), clock, expect={"nccl_transport": "NET/IB"})
    assert (result.ok, result.facts["nccl_transport"]) == (True, None)


def test_a_network_nccl_names_on_one_node_does_not_contradict_the_transport():
    clock = FakeClock()
    log = lines(CORPUS / "public" / "unknown-mp-8x-h100-one-pod-nccl-using-network-socket-excerpt.log")
    result = wait(ReplayedLog(log), clock, expect={"nccl_transport": "NET/IB"}, timeout=5)
    assert (result.reason, result.facts["nccl_transport"]) == ("timeout", None)


def test_a_failed_start_fails_at_once_with_the_hint():
    clock = FakeClock()
    result = wait(ReplayedLog(REFUSED, per_poll=100), clock)
    assert result.reason == "unsupported_architecture"
    assert "SparkinferTinyMoeForCausalLM" in result.message
    assert "use an image whose vLLM supports it" in result.message
    assert result.elapsed == 0


def test_exited_container_is_reported_with_its_stage():
    clock = FakeClock()
    cut = line_number(READY, "Starting to load model")
    result = wait(ReplayedLog(READY[:cut], status="exited"), clock)
    assert result.reason == "exited"
    assert "exited (exit code 1)" in result.message


def test_silence_after_distributed_init_is_a_stall_not_a_timeout():
    clock = FakeClock()
    cut = line_number(READY, "distributed_init_method") + 1
    result = wait(ReplayedLog(READY[:cut], per_poll=cut), clock, stall_timeout=60, timeout=900)
    assert result.reason == "stalled"
    assert result.elapsed == 60
    assert "hung in NCCL" in result.message


def test_repeated_shm_broadcast_warnings_are_not_progress():
    clock = FakeClock()
    cut = line_number(READY, "distributed_init_method") + 1
    result = wait(ReplayedLog(READY[:cut], per_poll=cut, then=SHM_STALL), clock, stall_timeout=30)
    assert result.reason == "stalled"
    assert "shm_broadcast_stall" in result.facts["warnings"]


GB10_COMPILE = lines(CORPUS / "public" / "0.13.0+faa43dbf.nv26.01-qwen3-30b-a3b-fp8-gb10-triton-fp8-moe-run3.log")
GB10_AUTOTUNE = lines(CORPUS / "public" / "0.18.1rc1.dev147+g290809456-qwen3.5-35b-a3b-fp8-gb10-ready.log")


GB10_SHARDS = lines(CORPUS / "public" / "0.25.1-laguna-nvfp4-moe-flashinfer-cutlass-dflash-gb10-kv-ready.log")


# Each GB10 log cut at a line, then only the other ranks' shared-memory-broadcast warnings: inside a compile the
# compile bound applies, after its end line the stall bound again. While the weights load, the load bound: the Qwen3.5
# log (GB10_AUTOTUNE) went 18 minutes without a line after Starting to load model (a download of its weights, 10:44:15
# to 11:02:26), the Laguna log (GB10_SHARDS) 36 s between shards; once the weights are in, the stall bound again.
@pytest.mark.parametrize(
    ("log", "last_line", "bound", "diagnosis"),
    [
        (GB10_COMPILE, "Dynamo bytecode transform time", 1800, "inside torch.compile or FlashInfer's autotuning"),
        (GB10_AUTOTUNE, "[Autotuner]: Autotuning process starts", 1800, "inside torch.compile or FlashInfer's autotuning"),
        (GB10_COMPILE, "Compiling a graph for compile range (1, 2048) takes", 300, "most likely hung in NCCL"),
        (GB10_AUTOTUNE, "[Autotuner]: Autotuning process ends", 300, "most likely hung in NCCL"),
        (GB10_AUTOTUNE, "Using FlashAttention version 2", 1135, "while loading the weights (stage loading_weights)"),
        (GB10_SHARDS, "Loading safetensors checkpoint shards:   8% Completed", 1135, "while loading the weights (stage loading_weights)"),
        (GB10_SHARDS, "Model loading took 95.63 GiB memory", 300, "most likely hung in NCCL"),
    ],
    ids=[
        "inside-torch-compile",
        "inside-flashinfer-autotune",
        "after-torch-compile",
        "after-flashinfer-autotune",
        "loading-before-the-first-shard",
        "loading-between-shards",
        "after-the-load",
    ],
)
def test_silence_inside_a_compile_or_a_load_gets_its_bound_and_after_it_the_stall_bound(log, last_line, bound, diagnosis):
    cut = line_number(log, last_line) + 1
    result = wait(
        ReplayedLog(log[:cut], per_poll=cut, then=SHM_STALL),
        FakeClock(),
        stall_timeout=300,
        compile_stall_timeout=1800,
        load_stall_timeout=1135,
        timeout=7200,
    )
    assert result.reason == "stalled"
    assert bound <= result.elapsed < bound + 10
    assert diagnosis in result.message
    named = {1800: "compile_stall_timeout (1800 s)", 1135: "longer than load_stall_timeout (1135 s", 300: "after distributed init"}
    assert named[bound] in result.message
    if bound == 1135:
        assert "free -g" in result.message


def test_without_a_load_bound_loading_gets_the_stall_bound_and_is_still_named():
    cut = line_number(GB10_AUTOTUNE, "Using FlashAttention version 2") + 1
    result = wait(ReplayedLog(GB10_AUTOTUNE[:cut], per_poll=cut), FakeClock(), stall_timeout=300, timeout=7200)
    assert (result.reason, result.elapsed) == ("stalled", 300)
    assert "while loading the weights" in result.message


def test_silence_before_distributed_init_runs_into_the_timeout():
    clock = FakeClock()
    cut = line_number(READY, "Resolved architecture") + 1
    result = wait(ReplayedLog(READY[:cut], per_poll=cut), clock, stall_timeout=10, timeout=120)
    assert result.reason == "timeout"
    assert result.elapsed == 120
    assert "did not reach ready within 120 s; stage architecture_resolved" in result.message


def test_ready_log_waits_for_the_api_to_answer():
    clock = FakeClock()
    answers = iter([(False, "/health: connection refused"), (False, "/v1/models answered 503"), (True, "ok")])
    result = wait(ReplayedLog(READY, per_poll=len(READY)), clock, probe=lambda: next(answers))
    assert result.ok
    assert result.elapsed == 2
    assert "its API answers" in result.message


def test_api_that_never_answers_times_out_naming_the_probe():
    clock = FakeClock()
    result = wait(ReplayedLog(READY, per_poll=len(READY)), clock, probe=lambda: (False, "/health answered 500"), timeout=5)
    assert result.reason == "timeout"
    assert "(API: /health answered 500)" in result.message


@pytest.mark.parametrize("stage", ["architecture_resolved", "kv_cache_ready"])
def test_waits_for_an_earlier_stage(stage):
    clock = FakeClock()
    result = wait(ReplayedLog(READY), clock, target_stage=stage)
    assert result.ok
    assert STAGE_INDEX[stage] <= STAGE_INDEX[result.facts["stage"]] < STAGE_INDEX["ready"]


ENV_TRAP = lines(lab_log("0.32.0-env-var-entrypoint-trap"))


def test_a_given_variable_vllm_does_not_know_fails_once_the_config_shows_its_effect():
    clock = FakeClock()
    result = wait(ReplayedLog(ENV_TRAP, per_poll=1), clock, given_env=["VLLM_MAX_MODEL_LEN", "VLLM_CPU_KVCACHE_SPACE"])
    assert (result.ok, result.reason) == (False, "ignored_environment")
    assert "vLLM ignored VLLM_MAX_MODEL_LEN, which the container was given" in result.message
    assert "max_model_len=4096" in result.message
    assert result.elapsed == line_number(ENV_TRAP, "Using max model len 4096")


def test_unknown_variables_the_container_was_not_given_are_not_a_failure():
    clock = FakeClock()
    result = wait(ReplayedLog(ENV_TRAP, per_poll=50), clock, given_env=["VLLM_CPU_KVCACHE_SPACE"])
    assert (result.ok, result.reason) == (True, None)


def test_a_written_log_is_read_to_its_end_without_sleeping_before_any_verdict():
    # An earlier start that failed, then the start that reached ready: the latest start counts.
    clock = FakeClock()
    result = wait(WrittenLog(REFUSED + READY, per_poll=50), clock)
    assert (result.ok, result.facts["outcome"]) == (True, "ready")
    assert result.elapsed == 0


def test_a_backlog_that_never_ends_still_times_out():
    class Endless(WrittenLog):
        def read_new(self) -> list[str]:
            clock.now += 1
            return ["INFO 12-02 15:00:00 [x.py:1] filler"]

        def backlog(self) -> bool:
            return True

    clock = FakeClock()
    result = wait(Endless([]), clock, timeout=30)
    assert result.reason == "timeout"
    assert result.elapsed == 30


def test_a_log_that_never_appeared_is_named_in_the_timeout():
    clock = FakeClock()
    result = wait(MissingLog(), clock, timeout=60)
    assert result.reason == "timeout"
    assert result.message == "vLLM did not reach ready within 60 s: /var/log/vllm/serve.log does not exist, so there was no log to read."


def test_a_long_failure_line_is_cut_in_the_message_and_whole_in_the_facts():
    clock = FakeClock()
    line = "ValueError: " + "x" * 10_000
    result = wait(ReplayedLog([*READY[:5], line]), clock)
    assert result.reason == "other_error"
    assert result.facts["error"]["line"] == line
    assert f"ValueError: {'x' * (MESSAGE_LINE_CHARS - 12)} [...] -- " in result.message
    assert len(result.message) < MESSAGE_LINE_CHARS + 300


@pytest.mark.parametrize(
    ("bounds", "message"),
    [
        ({"timeout": 0}, "timeout must be more than 0 seconds, not 0"),
        ({"stall_timeout": -1}, "stall_timeout must be more than 0 seconds, not -1"),
        ({"poll_interval": 0.0}, "poll_interval must be more than 0 seconds, not 0.0"),
        ({"load_stall_timeout": 0}, "load_stall_timeout must be more than 0 seconds, not 0"),
    ],
)
def test_times_that_are_not_positive_are_refused(bounds, message):
    with pytest.raises(ValueError, match=message):
        wait(ReplayedLog(READY), FakeClock(), **bounds)


# The loader and the speculative decoding the spec asks for, against what real engine configs reported: NGC 26.01 on a GB10
# loading with fastsafetensors, a GB10 running MTP, and the lab's vLLM with neither.
FASTSAFETENSORS = lines(CORPUS / "public" / "0.13.0+faa43dbf.nv26.01-qwen3-30b-a3b-fp8-gb10-triton-fp8-moe-run1.log")
MTP = lines(CORPUS / "public" / "0.25.1-qwen3.6-35b-a3b-nvfp4-compressed-tensors-flashinfer-cutlass-mtp-gb10-kv-ready.log")


@pytest.mark.parametrize(
    ("log", "expect"),
    [(FASTSAFETENSORS, {"load_format": "fastsafetensors"}), (MTP, {"speculative_method": "mtp"}), (READY, {"load_format": "auto"})],
    ids=["fastsafetensors", "mtp", "lab-auto"],
)
def test_the_loader_and_speculative_decoding_asked_for_pass_where_the_engine_config_says_them(log, expect):
    result = wait(ReplayedLog(log), FakeClock(), expect=expect, target_stage="engine_config")
    assert (result.ok, result.reason) == (True, None), result.message


def test_speculative_decoding_the_engine_dropped_fails_at_its_config_naming_the_lever():
    result = wait(ReplayedLog(READY), FakeClock(), expect={"speculative_method": "mtp"}, expect_sources={"speculative_method": "the serve spec"})
    assert result.reason == "gate"
    assert result.message.startswith(
        "vLLM gate: the log says speculative_method=None, the gate expects speculative_method='mtp' (from the serve spec). vLLM runs without the "
        "speculative decoding the serve spec asks for"
    )
    assert result.elapsed == line_number(READY, "Initializing a V1 LLM engine") // 10


def test_a_loader_other_than_the_one_asked_for_fails_naming_it():
    result = wait(ReplayedLog(FASTSAFETENSORS), FakeClock(), expect={"load_format": "safetensors"})
    assert result.reason == "gate"
    assert "the log says load_format='fastsafetensors', the gate expects load_format='safetensors'." in result.message
    assert "an image whose entrypoint builds its own command drops the flag" in result.message
