# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The wait loop of vllm_wait: follow a vLLM log until a stage, failing fast on what goes wrong.

Pure: the log source, the clock, the sleep and the API probe are handed in, so tests run the
loop in milliseconds with a fake clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import (
    FAILURE_OUTCOMES,
    STAGE_INDEX,
    STAGES,
    VllmLogScanner,
)

# Facts the gate can hold vLLM to.
EXPECTABLE = (
    "architecture",
    "quantization",
    "dtype",
    "max_model_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "attention_backend",
    "moe_backend",
    "engine",
    "nccl_transport",
    "load_format",
    "speculative_method",
)

# What to do when the log contradicts a fact whose cause is not the spec itself.
MISMATCH_FIXES = {
    "speculative_method": (
        "vLLM runs without the speculative decoding the serve spec asks for (speculative_config), so the model decodes at "
        "its own speed: MTP is the main decode-speed lever on a Spark. An image whose entrypoint builds its own command drops "
        "the flag; otherwise check that the image's vLLM knows the method and that the checkpoint has its draft layers."
    ),
    "load_format": (
        "vLLM loads the weights another way than the serve spec asks (load_format): an image whose entrypoint builds its own "
        "command drops the flag. Serve an image that takes the spec's flags, or leave load_format unset."
    ),
    "nccl_transport": (
        "NCCL carries the tensors over TCP sockets, not RoCE: a fraction of the ConnectX-7's bandwidth. Give the containers "
        "the RDMA devices, unlimited memlock and IPC_LOCK (vllm_serve_rdma and ray_cluster_rdma, on by default when "
        "nccl_network found RoCE HCAs), check that NCCL_IB_HCA names the cabled port's HCAs (ibdev2netdev) and that the "
        "image has the RDMA user-space libraries (libibverbs, libmlx5); the rank's log says why NCCL left NET/IB "
        "(NET/IB : No device found, Failed to open libibverbs)."
    ),
}
_ALIVE = {"created", "running", "restarting"}


# The longest part of a log line quoted in a failure message; the whole line is in the facts.
MESSAGE_LINE_CHARS = 500


class LogSource(Protocol):
    def read_new(self) -> list[str]: ...

    # Whether read_new() stopped at its cap with more of the log already waiting.
    def backlog(self) -> bool: ...

    # Why there is no log to read yet (such as a file that does not exist), or None.
    def missing(self) -> str | None: ...

    def state(self) -> dict[str, Any] | None: ...


@dataclass
class WaitResult:
    ok: bool
    reason: str | None
    message: str
    facts: dict[str, Any]
    stage_seconds: dict[str, float]
    elapsed: float
    tail: list[str] = field(default_factory=list)


def gate_mismatch(expect: dict[str, Any], scanner: VllmLogScanner, sources: Mapping[str, str] | None = None) -> str | None:
    """The first expected fact the log contradicts, as a sentence naming where the expectation came from; None while all agree so far."""
    facts = scanner.facts()
    for key, wanted in expect.items():
        if not scanner.said(key) and facts.get(key) is None:
            continue
        got = facts.get(key)
        if key == "nccl_transport" and isinstance(wanted, str) and isinstance(got, str):
            # NCCL's RDMA plugin (HPC-X's, in NGC images on Sparks) names the same verbs transport NET/IBext_v10.
            agree = got.startswith(wanted)
        elif isinstance(wanted, str) and isinstance(got, str):
            agree = wanted.lower() == got.lower()
        elif wanted is None or got is None:
            agree = wanted == got
        else:
            agree = str(wanted) == str(got)
        if not agree:
            fix = f" {MISMATCH_FIXES[key]}" if key in MISMATCH_FIXES else ""
            source = f" (from {sources[key]})" if sources and key in sources else ""
            return f"the log says {key}={got!r}, the gate expects {key}={wanted!r}{source}.{fix}"
    return None


def quoted(line: str) -> str:
    """A log line as a message quotes it: cut after MESSAGE_LINE_CHARS."""
    return line if len(line) <= MESSAGE_LINE_CHARS else f"{line[:MESSAGE_LINE_CHARS]} [...]"


# The slowest a Spark should read its weights: a little under the slowest load known on one (36.73 GiB a rank in
# 682.77 s, 55 MiB/s, against 102.27 GiB in 456.33 s on another pair; SPARK_FACTS.md, start-up stage 10).
LOAD_FLOOR_BYTES_PER_SECOND = 50 * 2**20


def load_stall_bound(weights_bytes: int, ranks: int, stall_timeout: float) -> int:
    """Seconds of silence that loading a rank's share of the weights may take at the floor rate, never less than the
    stall bound: some loaders print nothing until they are done, and a 119 GB model takes 456-685 s on Sparks."""
    if weights_bytes < 0 or ranks < 1:
        raise ValueError(f"the weights' size ({weights_bytes} bytes) and the ranks ({ranks}) must be 0 or more and 1 or more")
    return max(int(stall_timeout), -(-weights_bytes // (ranks * LOAD_FLOOR_BYTES_PER_SECOND)))


def check_bounds(timeout: float, stall_timeout: float, poll_interval: float, compile_stall_timeout: float = 1.0, load_stall_timeout: float = 1.0) -> None:
    """Refuse times that are not positive: a poll interval of 0 would spin, a timeout of 0 never wait."""
    bounds = (
        ("timeout", timeout),
        ("stall_timeout", stall_timeout),
        ("compile_stall_timeout", compile_stall_timeout),
        ("load_stall_timeout", load_stall_timeout),
        ("poll_interval", poll_interval),
    )
    for name, value in bounds:
        if value <= 0:
            raise ValueError(f"{name} must be more than 0 seconds, not {value}")


def ignored_environment(given_env: Iterable[str], scanner: VllmLogScanner) -> list[str]:
    """The variables the container was given that vLLM says it does not know: they changed nothing."""
    unknown = {warning.split(":", 1)[1] for warning in scanner.facts()["warnings"] if warning.startswith("unknown_env_var:")}
    return [name for name in given_env if name in unknown]


def wait_for_vllm(
    source: LogSource,
    *,
    target_stage: str = "ready",
    expect: dict[str, Any] | None = None,
    expect_sources: Mapping[str, str] | None = None,
    given_env: Iterable[str] = (),
    timeout: float = 900.0,
    stall_timeout: float = 300.0,
    compile_stall_timeout: float = 1800.0,
    load_stall_timeout: float | None = None,
    poll_interval: float = 2.0,
    clock: Callable[[], float],
    sleep: Callable[[float], None],
    probe: Callable[[], tuple[bool, str]] | None = None,
    tail_lines: int = 20,
) -> WaitResult:
    """Follow the log until target_stage (and, with a probe, until the API answers)."""
    load_bound = stall_timeout if load_stall_timeout is None else load_stall_timeout
    check_bounds(timeout, stall_timeout, poll_interval, compile_stall_timeout, load_bound)
    expect = expect or {}
    scanner = VllmLogScanner()
    tail: deque[str] = deque(maxlen=max(0, min(tail_lines, 200)))
    start = clock()
    last_progress = start
    stage_seconds: dict[str, float] = {}
    target = STAGE_INDEX[target_stage]
    probe_detail = ""

    def result(ok: bool, reason: str | None, message: str) -> WaitResult:
        return WaitResult(ok, reason, message, scanner.facts(), stage_seconds, round(clock() - start, 3), list(tail))

    def timed_out() -> WaitResult:
        missing = source.missing()
        if missing:
            return result(False, "timeout", f"vLLM did not reach {target_stage} within {timeout:.0f} s: {missing}, so there was no log to read.")
        waited = f" (API: {probe_detail})" if probe_detail else ""
        return result(False, "timeout", f"vLLM did not reach {target_stage} within {timeout:.0f} s; stage {scanner.facts()['stage']}{waited}.")

    while True:
        new = source.read_new()
        now = clock()
        if new:
            stalls_before = scanner.shm_stalls
            scanner.feed(new)
            tail.extend(line.rstrip("\n") for line in new)
            # A repeated shared-memory-broadcast warning is what a hung rank prints: not progress.
            if len(new) > scanner.shm_stalls - stalls_before:
                last_progress = now
        for stage in scanner.stages_seen():
            stage_seconds.setdefault(stage, round(now - start, 3))
        if source.backlog():
            # More of the log is already written: read it before judging, since an earlier start's
            # failure may be followed by a good start, and without sleeping.
            if now - start >= timeout:
                return timed_out()
            continue
        facts = scanner.facts()
        if facts["outcome"] in FAILURE_OUTCOMES:
            error = facts["error"]
            return result(False, facts["outcome"], f"vLLM failed ({facts['outcome']}): {quoted(error['line'])} -- {error['hint']}")
        ignored = ignored_environment(given_env, scanner)
        # vLLM warns before it settles its config: fail once the config shows what the setting became.
        if ignored and (facts["max_model_len"] is not None or scanner.stage_index() >= STAGE_INDEX["engine_config"]):
            return result(
                False,
                "ignored_environment",
                f"vLLM ignored {', '.join(ignored)}, which the container was given (vLLM: Unknown vLLM environment variable "
                f"detected), so {'that setting' if len(ignored) == 1 else 'those settings'} did not take: vLLM runs with "
                f"max_model_len={facts['max_model_len']!r}. This image's entrypoint does not read "
                f"{'it' if len(ignored) == 1 else 'them'}: pass the setting as a flag (the serve spec, such as "
                "vllm_serve_max_model_len) or use the env profile of an image whose entrypoint reads it.",
            )
        mismatch = gate_mismatch(expect, scanner, expect_sources)
        if mismatch:
            return result(False, "gate", f"vLLM gate: {mismatch} Stop: this is not the deployment that was asked for.")
        if scanner.stage_index() >= target:
            if probe is None:
                return result(True, None, f"vLLM reached {STAGES[scanner.stage_index()]}")
            answered, probe_detail = probe()
            if answered:
                return result(True, None, f"vLLM reached {STAGES[scanner.stage_index()]} and its API answers")
        state = source.state()
        if state is not None and state.get("status") not in _ALIVE:
            return result(
                False,
                "exited",
                f"the vLLM container is {state.get('status')} (exit code {state.get('exit_code')}) at stage "
                f"{facts['stage']}: its log ends with the lines in tail.",
            )
        # torch.compile and FlashInfer's autotuning print nothing for minutes on a first launch (the other ranks
        # only their shared-memory-broadcast warnings): they get their own, longer bound.
        compiling = scanner.compiling
        # Reading the weights from disk prints a line a shard, or nothing until the end: its own bound, from their size.
        loading = scanner.stage_index() == STAGE_INDEX["loading_weights"]
        bound = compile_stall_timeout if compiling else load_bound if loading else stall_timeout
        if scanner.stage_index() >= STAGE_INDEX["distributed_init"] and now - last_progress >= bound:
            if loading and not compiling:
                return result(
                    False,
                    "stalled",
                    f"no progress in vLLM's log for {now - last_progress:.0f} s while loading the weights (stage loading_weights), "
                    f"longer than load_stall_timeout ({load_bound:.0f} s, the weights read at the slowest rate a Spark should "
                    "manage). Loading reads them from disk into the unified memory, beside the page cache: check the disk's "
                    "read rate (iostat -x 5), that memory is not short (free -g: a page cache left full squeezes the load), "
                    "and raise the bound for a slow disk.",
                )
            if compiling:
                return result(
                    False,
                    "stalled",
                    f"no progress in vLLM's log for {now - last_progress:.0f} s inside torch.compile or FlashInfer's autotuning "
                    f"(stage {facts['stage']}), longer than compile_stall_timeout ({compile_stall_timeout:.0f} s). A first launch of a "
                    "model and image compiles for minutes and the caches shorten the next one: raise the bound for a first "
                    "launch; a relaunch that compiles this long is hung (check the fabric and that every rank runs the same image).",
                )
            return result(
                False,
                "stalled",
                f"no progress in vLLM's log for {now - last_progress:.0f} s after distributed init (stage {facts['stage']}): "
                "the ranks are most likely hung in NCCL. Check the fabric between the nodes and that every rank "
                "runs the same image and flags.",
            )
        if now - start >= timeout:
            return timed_out()
        sleep(max(0.0, min(poll_interval, timeout - (now - start))))
