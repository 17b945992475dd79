# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A streaming parser of vLLM server logs (vLLM 0.5 to today, V0 and V1 engines).

Feed it lines (from a file, `docker logs`, docker compose, with or without timestamps, ANSI
colours, progress bars, process prefixes such as `(EngineCore_DP0 pid=12)`) and it keeps only
the facts: version, architecture, quantization, parallel sizes, backends, KV cache, the last
stage reached and, when the start failed, the decisive line with what to do about it. A log
holding several starts (a restarted container) reports the latest one.

Speed matters (logs of millions of lines are read while a deployment waits), so the hot loop
does no regular-expression work on a line unless its first word names a message of interest:
lines are dispatched through a dict keyed by that word. No I/O here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_net import NcclNet

STAGES = (
    "starting",
    "args_parsed",
    "architecture_resolved",
    "engine_config",
    "distributed_init",
    "loading_weights",
    "weights_loaded",
    "kv_cache_ready",
    "graphs_captured",
    "api_starting",
    "ready",
)
STAGE_INDEX = {name: index for index, name in enumerate(STAGES)}
_READY = STAGE_INDEX["ready"]
FAILURE_OUTCOMES = (
    "oom",
    "kv_cache_insufficient",
    "unsupported_architecture",
    "nccl_error",
    "ray_placement_timeout",
    "bad_argument",
    "other_error",
)
# The first vLLM release that has a model class, for the hint of an unsupported architecture.
FIRST_VLLM_WITH_ARCHITECTURE = {
    "Qwen3_5MoeForConditionalGeneration": "0.17.0",
    "Qwen3_5ForConditionalGeneration": "0.17.0",
}

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A console's colours copied without their escape byte (a web page's copy of Ray's log): " [36m(RayWorkerVllm pid=5085)
# [0m [E ProcessGroupNCCL.cpp:475] ...".
_SGR_REMNANT = re.compile(r"\[\d+(?:;\d+)*m ?")
_LEADING_SGR_REMNANT = re.compile(r" *\[\d+(?:;\d+)*m\(")
_DOCKER_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d) ")
# Docker Desktop's log view, copied: "2026-05-14 12:43:57.662 | (APIServer pid=1) INFO: ..."
_DESKTOP_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \| ")
_COMPOSE_NAME = re.compile(r"(?:\[[\w.-]+\]|[\w][\w.-]*)$")
_LEVELS = ("INFO", "WARN", "ERRO", "DEBU", "CRIT")
_EXCEPTION_SUFFIXES = ("Error", "Exception", "Interrupt", "Exit")
_INDENT = frozenset(" \t^~")
# Last letters of a first word that _on_other_word can act on: "ValueError:", "...Error", "...Exception".
_OTHER_WORD_ENDINGS = frozenset(":rn")

_VERSION_IN_BANNER = re.compile(r"\bversion\s+(v?\d+\.\d+\S*)")
_ENGINE_VERSION = re.compile(r"LLM engine \(v(\S+?)\) with config")
_CONFIG_FIELDS = {
    "quantization": re.compile(r"\bquantization=([\w-]+)"),
    "dtype": re.compile(r"\bdtype=(?:torch\.)?(\w+)"),
    "max_model_len": re.compile(r"\bmax_seq_len=(\d+)"),
    "tensor_parallel_size": re.compile(r"\btensor_parallel_size=(\d+)"),
    "pipeline_parallel_size": re.compile(r"\bpipeline_parallel_size=(\d+)"),
    # V1 prints load_format=auto, V0 load_format=LoadFormat.AUTO.
    "load_format": re.compile(r"\bload_format=(?:LoadFormat\.)?(\w+)"),
}
# speculative_config=None, or SpeculativeConfig(method='mtp', model=..., num_spec_tokens=3): the method runs.
_SPECULATIVE = re.compile(r"\bspeculative_config=(?:None\b|SpeculativeConfig\(method='(\w+)')")
# In `non-default args: {'max_model_len': 512, ...}` (V1) or `args: Namespace(max_model_len=512, ...)` (V0).
_ARG_FIELDS = {
    key: re.compile(r"""(?:[{(,]\s*)['"]?""" + key + r"""['"]?(?::\s*|=)'?([\w.-]+)""")
    for key in ("max_model_len", "tensor_parallel_size", "pipeline_parallel_size", "quantization", "dtype")
}
_FUSIONS = re.compile(r"'fuse_(\w+)': True")
_ATTENTION_ENUM = re.compile(r"^Using (?:AttentionBackendEnum\.)?([A-Z][A-Z0-9_]+) (?:attention )?backend")
_ATTENTION_WORDS = {
    "Flash Attention": "FLASH_ATTN",
    "FlashAttention": "FLASH_ATTN",
    "XFormers": "XFORMERS",
    "FlashInfer": "FLASHINFER",
    "Torch SDPA": "TORCH_SDPA",
    "Triton": "TRITON_ATTN",
    "Rocm Attention": "ROCM_ATTN",
    "ROCmFlashAttention": "ROCM_FLASH",
    "FlexAttention": "FLEX_ATTENTION",
    "Pallas": "PALLAS",
}
_ATTENTION_PROSE = re.compile(r"^Using ([A-Za-z][\w ]*?) backend(?: on V1 engine)?\.?$")
_MOE_BACKEND = re.compile(r"^Using '?([A-Za-z0-9_][\w ]*?)'? (?:\w+ )?MoE backend")
_MOE_MARLIN = re.compile(r"^Using (\w+) backend for \w+ MoE")
_KV_TOKENS = re.compile(r"KV cache size: ([\d,]+) tokens")
_CONCURRENCY = re.compile(r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x")
_WEIGHTS_GIB = re.compile(r"took ([\d.]+) ?Gi?B")
_NCCL = re.compile(r"nccl==(\S+)")
_NCCL_BANNER = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_RANK_ASSIGNED = re.compile(r"rank \d+ in world size (\d+) is assigned as")
_WORLD_SIZE = re.compile(r"\bworld_size=(\d+)")
_ARCH_RESOLVED = re.compile(r"Resolved architecture: (\w+)")
_ARCH_UNSUPPORTED = re.compile(r"Model architectures \[([^\]]*)\] (?:are not supported for now|failed to be inspected)")
_MAX_MODEL_LEN = re.compile(r"Using max model len (\d+)")
# A headless rank of a multi-node mp launch prints no API server version: "Launching vLLM (v0.32.0) headless multiproc
# executor, with head node address ..."
_HEADLESS_VERSION = re.compile(r"^Launching vLLM \(v(\S+)\) headless")
# The quantization method, where the engine config is not in the log, from what a layer's method says it runs
# (docs/vllm-log-intelligence.md, "Quantization"):
# gptq_marlin.py, awq_marlin.py: "The model is convertible to gptq_marlin during runtime. Using gptq_marlin kernel."
_QUANT_CONVERTIBLE = re.compile(r"The model is convertible to (\w+) during runtime")
# The platform's check: "The quantization method fp8 is not supported for the current GPU. Minimum capability: 90."
_QUANT_UNSUPPORTED = re.compile(r"The quantization method (\S+) is not supported for the current GPU")
_MAX_SEQ_LEN = re.compile(r"max seq len \((\d+)\)")
_ESTIMATED_LEN = re.compile(r"estimated maximum model length is (\d+)")
_V0_KV_TOKENS = re.compile(r"can be stored in KV cache \((\d+)\)")
_V0_BLOCKS = re.compile(r"# \w+ blocks: \d")
_ENV_VAR = re.compile(r"Unknown vLLM environment variable detected: (\w+)")
_TP_BIGGER = re.compile(r"tensor_parallel_size=(\d+) is bigger than a reserved number of GPUs \((\d+) GPUs?\)")
_TORCH_CAPABILITY = re.compile(r"which is of cuda capability (\d+\.\d+)")
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception|Interrupt|Exit))(?::|$)")


@dataclass
class _Start:
    """Facts of one start of vLLM; a new start replaces it."""

    facts: dict[str, Any] = field(default_factory=dict)
    stage: int = -1
    stages_seen: list[str] = field(default_factory=list)
    error: dict[str, str] | None = None
    generic_error: dict[str, str] | None = None
    failure_marker: dict[str, str] | None = None
    warnings: list[str] = field(default_factory=list)
    shm_stalls: int = 0
    kv_estimate: str | None = None
    from_args: dict[str, Any] = field(default_factory=dict)
    # Stopped by a signal: the exceptions its shutdown raises (EngineDeadError) are not failures.
    stopping: bool = False
    # What NCCL_DEBUG=INFO lines said about the network between the nodes.
    nccl_net: NcclNet = field(default_factory=NcclNet)
    # Inside torch.compile, or FlashInfer's autotuning: minutes in which a rank prints nothing of its own.
    torch_compiling: bool = False
    autotuning: bool = False


# -- the failure classes: what a decisive line says, the facts it carries, what to do about it -----------------

_OTHER_ERROR_HINT = "vLLM stopped on this error: read the lines before it in the log for its cause."


def _read_architecture(line: str, start: _Start) -> None:
    match = _ARCH_UNSUPPORTED.search(line)
    if match:
        # str.split always gives one item at least: the first name, or "" where the brackets are empty.
        names = [name.strip().strip("'\"") for name in match.group(1).split(",")]
        start.facts.setdefault("architecture", names[0])


def _read_kv_cache_sizes(line: str, start: _Start) -> None:
    capacity = _V0_KV_TOKENS.search(line)
    if capacity:
        # V0 says the KV cache's size in tokens only here: "... the maximum number of tokens that can be stored in KV
        # cache (23648)".
        start.facts.setdefault("kv_cache_tokens", int(capacity.group(1)))
    estimate = _ESTIMATED_LEN.search(line) or capacity
    if estimate:
        start.kv_estimate = estimate.group(1)
    asked = _MAX_SEQ_LEN.search(line)
    if asked:
        start.facts.setdefault("max_model_len", int(asked.group(1)))


def _read_nccl_version(line: str, start: _Start) -> None:
    # torch's wording: "NCCL error in: ...ProcessGroupNCCL.cpp:1333, internal error ..., NCCL version 2.18.6"
    version = _NCCL_BANNER.search(line)
    if version:
        start.facts.setdefault("nccl_version", version.group(1))


def _hint_unsupported_architecture(line: str, start: _Start) -> str:
    arch = start.facts.get("architecture")
    version = start.facts.get("vllm_version")
    needed = FIRST_VLLM_WITH_ARCHITECTURE.get(arch or "")
    since = f" ({arch} is in vLLM {needed} and later)" if needed else ""
    return f"{f'vLLM {version}' if version else 'This vLLM'} has no {arch}: use an image whose vLLM supports it{since}."


def _hint_inspection_failed(line: str, start: _Start) -> str:
    return (
        f"This vLLM has {start.facts.get('architecture')} but could not import its module to inspect it: the lines before "
        "say why (a missing or mismatched package in the image, a GPU the module's kernels do not support)."
    )


def _hint_kv_cache(line: str, start: _Start) -> str:
    if start.kv_estimate:
        return (
            f"The KV cache holds at most {start.kv_estimate} tokens: set --max-model-len {start.kv_estimate} or lower, "
            "or give the KV cache more memory (--gpu-memory-utilization, --kv-cache-memory-bytes)."
        )
    return "No memory is left for the KV cache: raise --gpu-memory-utilization or spread the model over more nodes."


def _hint_memory_free_at_start(line: str, start: _Start) -> str:
    return (
        "Less memory was free at start than --gpu-memory-utilization asks for: lower it, stop what holds "
        "memory (other containers, page cache: drop caches before launch), or spread the model over more nodes."
    )


def _hint_out_of_memory(line: str, start: _Start) -> str:
    return "The GPU ran out of memory: lower --gpu-memory-utilization or --max-model-len, or use more nodes."


def _hint_nccl(line: str, start: _Start) -> str:
    return (
        "The ranks stopped talking over NCCL: check the fabric between the nodes (link, MTU, NCCL_SOCKET_IFNAME, "
        "NCCL_IB_HCA, GID index) and that every rank runs the same image and flags."
    )


def _hint_ray_placement(line: str, start: _Start) -> str:
    waiting = re.search(r"placement group of specs for (\d+) seconds\. specs=(\[.*?\])", line)
    if waiting:
        return (
            f"Ray has waited {waiting.group(1)} s to place the workers ({waiting.group(2)}): the cluster lacks a node or a GPU "
            "they ask for. Check that `ray status` shows every node with its GPU, that each node joined with the address "
            "vLLM uses (VLLM_HOST_IP), and clear stale Ray sessions and placement groups from an earlier run."
        )
    return (
        "Ray could not place the workers: check that `ray status` shows every node with its GPU, and clear "
        "stale Ray sessions and placement groups from an earlier run."
    )


def _hint_no_ray_executor(line: str, start: _Start) -> str:
    return "This platform cannot use the Ray executor: use --distributed-executor-backend mp (with --nnodes across nodes)."


def _hint_bad_argument(line: str, start: _Start) -> str:
    return "vLLM refused its arguments: fix the flag this line names (see `vllm serve --help`)."


@dataclass(frozen=True)
class _Failure:
    """One wording of a failure: whether a decisive line says it, its class, the facts it carries, the advice."""

    category: str
    says: Callable[[str], bool]
    hint: Callable[[str, _Start], str]
    reads: Callable[[str, _Start], None] | None = None


# In order: the first wording a line says decides its class.
_FAILURES = (
    _Failure(
        "unsupported_architecture",
        lambda text: "Model architectures" in text and "not supported for now" in text,
        _hint_unsupported_architecture,
        _read_architecture,
    ),
    # vLLM has the class, but inspecting it (in a subprocess, importing its module) failed: no image lacks it.
    _Failure("other_error", lambda text: "Model architectures" in text and "failed to be inspected" in text, _hint_inspection_failed, _read_architecture),
    _Failure("kv_cache_insufficient", lambda text: "max seq len" in text and "KV cache" in text, _hint_kv_cache, _read_kv_cache_sizes),
    _Failure("kv_cache_insufficient", lambda text: "No available memory for the cache blocks" in text, _hint_kv_cache, _read_kv_cache_sizes),
    _Failure("oom", lambda text: "on startup is less than desired GPU memory utilization" in text, _hint_memory_free_at_start),
    _Failure("oom", lambda text: "ut of memory" in text or "OutOfMemoryError" in text, _hint_out_of_memory),
    _Failure(
        "nccl_error",
        lambda text: (
            "NCCL error" in text
            or "ncclSystemError" in text
            or "ncclInternalError" in text
            or "Watchdog caught collective operation timeout" in text
            or "DistBackendError" in text
        ),
        _hint_nccl,
        _read_nccl_version,
    ),
    _Failure(
        "ray_placement_timeout",
        lambda text: "placement group" in text and ("Cannot provide" in text or "timed out" in text or "imeout" in text or "Waiting for creating" in text),
        _hint_ray_placement,
    ),
    _Failure("ray_placement_timeout", lambda text: "Current node has no GPU available" in text, _hint_ray_placement),
    _Failure("bad_argument", lambda text: "does not support ray" in text, _hint_no_ray_executor),
    _Failure("bad_argument", lambda text: "is greater than the derived max_model_len" in text, _hint_bad_argument),
    _Failure("bad_argument", lambda text: ": error: " in text or text.startswith("error: "), _hint_bad_argument),
)


def _failure_said(text: str) -> _Failure | None:
    """The failure wording a decisive line says, or None if it is not decisive."""
    return next((failure for failure in _FAILURES if failure.says(text)), None)


def _indented_line_says_something(line: str) -> bool:
    # Traceback bodies and continuation lines: only pydantic errors, torch capability warnings, wrapped
    # banners and torch's NCCL watchdog (behind a console's prefix) say anything.
    return "Value error, " in line or "cuda capability" in line or "\u2588" in line or "Watchdog caught" in line


def _controls_removed(line: str) -> str:
    if "\r" in line:
        # A progress bar redraws itself with carriage returns: its last state counts.
        line = line.rstrip("\r\n").rsplit("\r", 1)[-1]
    return _ANSI.sub("", line) if "\x1b" in line else line


class VllmLogScanner:
    """Incremental scanner: call feed() with batches of lines, read facts() at any time."""

    def __init__(self) -> None:
        self.lines_seen = 0
        self._start = _Start()
        # Only the V1 engine runs its API server and engine core as processes that prefix their lines.
        self._v1_prefix_seen = False
        self._handlers: dict[str, Callable[[str], None]] = {
            "Resolved": self._on_resolved,
            "Initializing": self._on_initializing,
            "Using": self._on_using,
            "GPU": self._on_kv_size,
            "CPU": self._on_kv_size,
            "Maximum": self._on_kv_size,
            "#": self._on_v0_blocks,
            "Model": self._on_model,
            "Loading": self._on_loading,
            "Starting": self._on_starting,
            "vLLM": self._on_vllm,
            "vllm": self._on_cli_error,
            "vllm:": self._on_cli_error,
            "non-default": self._on_args,
            "args:": self._on_args,
            "DP": self._on_distributed,
            "rank": self._on_distributed,
            "Graph": self._on_graphs,
            "init": self._on_init_engine,
            "Unknown": self._on_unknown,
            "No": self._on_no_available_or_current,
            "Found": self._on_found,
            "Route:": self._on_route,
            "Available": self._on_available,
            "Application": self._on_application,
            "Uvicorn": self._on_application,
            "Value": self._on_value_error,
            "EngineCore": self._on_engine,
            "WorkerProc": self._on_engine,
            "CUDA": self._on_cuda,
            "torch.compile": self._on_compile,
            "Dynamo": self._on_dynamo,
            "Compiling": self._on_compile,
            "Engine": self._on_engine,
            "usage:": self._on_usage,
            "": self._on_banner,
            "NCCL": self._on_nccl_debug,
            "[shutdown]": self._on_shutdown,
            "Exception": self._on_worker_exception,
            "Failed": self._on_failed_to_load,
            "The": self._on_the,
            "Waiting": self._on_waiting,
            "Avg": self._on_v0_stats,
            "Launching": self._on_launching,
            "Processed": self._on_processed,
        }

    # -- the hot loop -------------------------------------------------------------------------

    def feed(self, lines: Iterable[str]) -> None:
        # The fast path: most lines carry vLLM's source tag ("... [model.py:733] message", or
        # "model.py:733] message" before 0.7), whatever prefixes stand before it, so one find()
        # locates the message. Everything else (tracebacks, uvicorn, argparse, compose and
        # docker timestamps around untagged lines) takes the slow path, which strips prefixes.
        handlers = self._handlers
        seen = 0
        v1_seen = self._v1_prefix_seen
        for line in lines:
            seen += 1
            if "\x1b" in line or "\r" in line:
                line = _controls_removed(line)  # noqa: PLW2901
            if not v1_seen and ("(APIServer pid=" in line or "(EngineCore" in line or "(Worker" in line or "(VllmWorker rank=" in line):
                v1_seen = self._v1_prefix_seen = True
            cut = line.find("] ")
            if cut > 0 and line.find(".py:", cut - 12, cut) > 0:
                message = line[cut + 2 :]
                space = message.find(" ")
                handler = handlers.get(message[:space] if space >= 0 else message.rstrip())
                if handler is not None:
                    handler(message)
                elif space > 0 and (message[space - 1] == ":" or "=" in message[:space]):
                    self._on_other_word(message, message[:space])
                elif message.startswith(" quantization is not fully optimized", space):
                    # The model config names the method it resolved: "mxfp4 quantization is not fully optimized yet. ..."
                    self._set("quantization", message[:space])
            elif 'HTTP/1.1" ' in line and ' - "' in line:
                # uvicorn's access lines, most of a serving server's log: uvicorn answers requests only once vLLM's
                # API server started it, so the first one says the server is up (where the start-up lines are not in
                # an excerpt); the rest say nothing the facts hold.
                if self._start.stage < _READY:
                    self._reach("ready")
            elif line[:1] in _INDENT:
                if _indented_line_says_something(line):
                    self._slow(line)
            else:
                self._slow(line)
        self.lines_seen += seen

    def _slow(self, line: str) -> None:
        if _LEADING_SGR_REMNANT.match(line):
            line = _SGR_REMNANT.sub("", line).lstrip(" ")
        first = line[:1]
        if first == "(":
            # Process prefixes nest: "(EngineCore_DP0 pid=742) (RayWorkerWrapper pid=927, ip=...) ..."
            while line[:1] == "(":
                close = line.find(") ", 0, 96)
                if close < 0 or line.find(" pid=", 0, close) < 0:
                    break
                line = line[close + 2 :]
        elif first == "[":
            if line.startswith("[rank"):
                # torchrun-style rank prefix: "[rank0]: ValueError: ..."
                close = line.find("]: ", 0, 16)
                if close > 0:
                    line = line[close + 3 :]
            else:
                line = self._without_compose_prefix(line)
        else:
            if first.isdigit() and line[10:11] in ("T", " "):
                match = (_DOCKER_TIMESTAMP if line[10] == "T" else _DESKTOP_TIMESTAMP).match(line)
                if match:
                    line = line[match.end() :]
            line = self._without_compose_prefix(line)
            if line[:1] == "(":
                self._slow(line)
                return
        first = line[:1]
        if first in _INDENT:
            if not _indented_line_says_something(line):
                return
            message = line.strip()
        elif first == "I" and line.startswith("INFO:"):
            message = line[5:].lstrip()
        elif line[:4] in _LEVELS:
            cut = line.find("] ", 0, 96)
            message = line[cut + 2 :] if cut > 0 else line
        else:
            message = line.rstrip()
        space = message.find(" ")
        word = message[:space] if space > 0 else message.rstrip()
        handler = self._handlers.get(word)
        if handler is not None:
            handler(message)
        elif word[-1:] in _OTHER_WORD_ENDINGS or "=" in word or "NCCL" in message or "\u2588" in message or "[Autotuner]" in message:
            self._on_other_word(message, word)

    @staticmethod
    def _without_compose_prefix(line: str) -> str:
        # docker compose: "vllm-openai  | INFO ..." or "[vllm]        | INFO ..."
        pipe = line.find(" | ", 0, 64)
        if pipe > 0 and _COMPOSE_NAME.match(line[:pipe].rstrip()):
            return line[pipe + 3 :]
        return line

    def _on_other_word(self, message: str, word: str) -> None:
        # Only exception names ("ValueError:", "torch.OutOfMemoryError:", "KeyboardInterrupt")
        # start a decisive line; paths like "/usr/lib/.../library.py:357:" start warnings.
        # Ray wraps a worker's exception: "ray.exceptions.RayTaskError(DistBackendError): ..."
        if word.rstrip(":").rstrip(")").endswith(_EXCEPTION_SUFFIXES):
            self._on_exception(message)
        elif "Watchdog caught collective operation timeout" in message:
            # torch's NCCL watchdog: "[Rank 4] Watchdog caught collective operation timeout: WorkNCCL(...) ran for ..."
            self._on_exception(message)
        elif word.endswith(".py:") and message.startswith(" error: ", len(word)):
            # argparse, named after the script: "api_server.py: error: unrecognized arguments: ..."
            self._on_exception(message)
        elif word.startswith("world_size="):
            self._on_distributed(message)
        elif word.startswith("tensor_parallel_size="):
            self._on_ray_gpus(message)
        elif "NCCL" in message:
            self._on_nccl_debug(message)
        elif "[Autotuner]: Autotuning process" in message:
            # FlashInfer's logger, not vLLM's: "2026-03-18 14:05:54,829 - INFO - autotuner.py:256 - flashinfer.jit:
            # [Autotuner]: Autotuning process starts ..." and "... ends".
            self._start.autotuning = "process starts" in message
        elif "\u2588" in message:
            self._on_banner(message)

    # -- state --------------------------------------------------------------------------------

    def _reach(self, stage: str) -> None:
        start = self._start
        index = STAGE_INDEX[stage]
        if stage not in start.stages_seen:
            start.stages_seen.append(stage)
        start.stage = max(start.stage, index)

    def _new_start_if_running(self) -> None:
        # A banner after the engine got going means vLLM started again: the latest start wins.
        if self._start.stage >= STAGE_INDEX["args_parsed"]:
            self._start = _Start()

    def _set(self, key: str, value: Any) -> None:
        self._start.facts.setdefault(key, value)

    def _warn(self, warning: str) -> None:
        if warning not in self._start.warnings:
            self._start.warnings.append(warning)

    def _fail(self, category: str, line: str, hint: str) -> None:
        start = self._start
        if start.error is None:
            start.error = {"category": category, "line": line.strip(), "hint": hint}

    # -- handlers -----------------------------------------------------------------------------

    def _on_banner(self, message: str) -> None:
        if "\u2588" not in message or "version" not in message:
            return
        match = _VERSION_IN_BANNER.search(message)
        if match:
            self._new_start_if_running()
            self._set("vllm_version", match.group(1).lstrip("v"))
            self._reach("starting")

    def _on_vllm(self, message: str) -> None:
        if message.startswith("vLLM API server version "):
            self._new_start_if_running()
            self._set("vllm_version", message.split()[4])
            self._reach("starting")
        elif message.startswith("vLLM is using nccl=="):
            match = _NCCL.search(message)
            if match:
                self._set("nccl_version", match.group(1))
            self._reach("distributed_init")

    def _on_args(self, message: str) -> None:
        if message.startswith(("non-default args:", "args: Namespace(")):
            self._reach("starting")
            self._reach("args_parsed")
            for key, pattern in _ARG_FIELDS.items():
                match = pattern.search(message)
                # V0's Namespace prints an unset argument as None: no value, not the text "None".
                if match and key not in self._start.from_args and match.group(1) != "None":
                    value = match.group(1)
                    self._start.from_args[key] = int(value) if value.isdigit() else value

    def _on_resolved(self, message: str) -> None:
        match = _ARCH_RESOLVED.match(message)
        if match:
            self._set("architecture", match.group(1))
            self._reach("architecture_resolved")

    def _on_initializing(self, message: str) -> None:
        if "LLM engine" not in message:
            return
        self._reach("engine_config")
        self._set("engine", "v1" if "V1 LLM engine" in message else "v0")
        match = _ENGINE_VERSION.search(message)
        if match:
            self._set("vllm_version", match.group(1))
        for key, pattern in _CONFIG_FIELDS.items():
            found = pattern.search(message)
            if found:
                value = found.group(1)
                if key == "quantization":
                    self._set(key, None if value == "None" else value.lower())
                elif key == "load_format":
                    self._set(key, value.lower())
                elif key == "max_model_len":
                    # What the engine runs with, over the "Using max model len" lines before it: a model's config may
                    # cut the length vLLM derived ("Changing max_model_len from 8192 to 2048"), and a draft model
                    # prints its own.
                    self._start.facts[key] = int(value)
                else:
                    self._set(key, int(value) if value.isdigit() else value)
        speculative = _SPECULATIVE.search(message)
        if speculative:
            self._set("speculative_method", speculative.group(1))
        if "pass_config" in message:
            self._set("custom_fusions", _FUSIONS.findall(message))

    def _on_using(self, message: str) -> None:
        if message.startswith("Using CompressedTensors"):
            # compressed_tensors_moe.py: "Using CompressedTensorsWNA16MarlinMoEMethod"
            self._set("quantization", "compressed-tensors")
            return
        if message.startswith("Using max model len "):
            match = _MAX_MODEL_LEN.match(message)
            if match:
                self._set("max_model_len", int(match.group(1)))
            return
        if message.startswith("Using default MoE config."):
            self._warn("default_moe_config")
            return
        if "MoE" in message:
            match = _MOE_BACKEND.match(message) or _MOE_MARLIN.match(message)
            if match and "MoEPrepare" not in message:
                self._set("moe_backend", match.group(1).strip().upper().replace(" ", "_"))
            return
        if "backend" not in message or "all-reduce" in message:
            return
        match = _ATTENTION_ENUM.match(message)
        if match:
            self._set("attention_backend", match.group(1))
            return
        prose = _ATTENTION_PROSE.match(message)
        if prose and prose.group(1) in _ATTENTION_WORDS:
            self._set("attention_backend", _ATTENTION_WORDS[prose.group(1)])

    def _on_kv_size(self, message: str) -> None:
        tokens = _KV_TOKENS.search(message)
        if tokens:
            self._set("kv_cache_tokens", int(tokens.group(1).replace(",", "")))
            self._reach("kv_cache_ready")
        concurrency = _CONCURRENCY.search(message)
        if concurrency:
            self._set("max_concurrency", float(concurrency.group(1)))
            self._reach("kv_cache_ready")

    def _on_v0_blocks(self, message: str) -> None:
        # V0's executor names the blocks after the device: "# GPU blocks: 70165, # CPU blocks: 8192" (0.6), "# CUDA
        # blocks: 1353, # CPU blocks: 1024" (0.7).
        if _V0_BLOCKS.match(message):
            self._reach("kv_cache_ready")

    def _on_model(self, message: str) -> None:
        if message.startswith("Model loading took"):
            match = _WEIGHTS_GIB.search(message)
            if match:
                self._set("model_weights_gib", float(match.group(1)))
            self._reach("weights_loaded")
        elif message.startswith("Model architectures"):
            self._on_exception(message)

    def _on_loading(self, message: str) -> None:
        if message.startswith(("Loading weights took", "Loading model weights took")):
            if message.startswith("Loading model weights took"):
                match = _WEIGHTS_GIB.search(message)
                if match:
                    self._set("model_weights_gib", float(match.group(1)))
            self._reach("weights_loaded")
        elif message.startswith(("Loading safetensors checkpoint shards", "Loading pt checkpoint shards")):
            self._reach("loading_weights")
        elif message.startswith("Loading weights with BitsAndBytes quantization"):
            self._set("quantization", "bitsandbytes")

    def _on_starting(self, message: str) -> None:
        if message.startswith("Starting to load model"):
            self._reach("loading_weights")
        elif message.startswith("Starting vLLM API server"):
            self._reach("api_starting")

    def _on_distributed(self, message: str) -> None:
        match = _WORLD_SIZE.search(message)
        if match and ("distributed_init_method" in message or message.startswith("DP group leader")):
            self._set("world_size", int(match.group(1)))
            self._reach("distributed_init")
            return
        assigned = _RANK_ASSIGNED.match(message)
        if assigned:
            self._set("world_size", int(assigned.group(1)))
            self._reach("distributed_init")

    def _on_graphs(self, message: str) -> None:
        if message.startswith("Graph capturing finished"):
            self._reach("graphs_captured")

    def _on_init_engine(self, message: str) -> None:
        if message.startswith("init engine (profile, create kv cache, warmup model) took"):
            self._reach("graphs_captured")

    def _on_unknown(self, message: str) -> None:
        match = _ENV_VAR.match(message)
        if match:
            self._warn(f"unknown_env_var:{match.group(1)}")

    def _on_no_available_or_current(self, message: str) -> None:
        """Three unrelated lines that start with "No": the shared-memory broadcast's wait, Ray's placement group lookup,
        and V0's failure to fit one cache block."""
        if message.startswith("No available shared memory broadcast block"):
            self._count_shm_broadcast_stall()
        elif message.startswith("No current placement group found"):
            self._reach("distributed_init")
        elif message.startswith("No available memory for the cache blocks"):
            self._on_exception(message)

    def _count_shm_broadcast_stall(self) -> None:
        # A reader waited a full interval for the shared-memory broadcast (shm_broadcast.py); more than one such wait after
        # ready means the engine stopped answering.
        self._start.shm_stalls += 1
        self._warn("shm_broadcast_stall")
        if self._start.stage >= STAGE_INDEX["ready"] and self._start.shm_stalls > 1:
            self._warn("shm_broadcast_stall_after_ready")

    def _on_ray_gpus(self, message: str) -> None:
        # "tensor_parallel_size=2 is bigger than a reserved number of GPUs (1 GPUs) in a node" (ray_utils): Ray sees
        # fewer GPUs on a node than the tensor parallel size, so placement will fail or hang. (Not V1's "Tensor parallel
        # size (16) exceeds available GPUs (8)": that one prints the world size against the GPUs of one node, vllm#31005,
        # and every multi-node Ray start prints it.)
        match = _TP_BIGGER.match(message)
        if match:
            self._start.from_args.setdefault("tensor_parallel_size", int(match.group(1)))
            self._warn(f"ray_gpus_short:{match.group(1)}>{match.group(2)}")

    def _on_found(self, message: str) -> None:
        match = _TORCH_CAPABILITY.search(message)
        if match:
            self._warn(f"torch_cuda_capability_unsupported:{match.group(1)}")

    def _on_route(self, message: str) -> None:
        # One line per route: only the first one moves the stage.
        if self._start.stage < STAGE_INDEX["api_starting"] and message.startswith("Route: "):
            self._reach("api_starting")

    def _on_available(self, message: str) -> None:
        if message.startswith("Available routes are:"):
            self._reach("api_starting")

    def _on_application(self, message: str) -> None:
        if message.startswith(("Application startup complete", "Uvicorn running on")):
            self._reach("ready")

    def _on_shutdown(self, message: str) -> None:
        if message.startswith("[shutdown] API server: shutdown triggered"):
            self._start.stopping = True

    def _on_worker_exception(self, message: str) -> None:
        # V0's multiproc workers: "Exception in worker VllmWorkerProcess while processing method X: <error>"
        if message.startswith("Exception in worker "):
            self._on_exception(message)

    def _on_failed_to_load(self, message: str) -> None:
        # V1: "Failed to load model - not enough GPU memory. ... (original error: CUDA out of memory. ...)"
        if message.startswith("Failed to load model"):
            self._on_exception(message)

    def _on_the(self, message: str) -> None:
        # V0's own line, before the ValueError that repeats it: "The model's max seq len (29000) is larger than the
        # maximum number of tokens that can be stored in KV cache (23648). ..."
        if message.startswith("The model's max seq len"):
            self._on_exception(message)
            return
        convertible = _QUANT_CONVERTIBLE.match(message)
        if convertible:
            self._set("quantization", convertible.group(1))

    def _on_waiting(self, message: str) -> None:
        # Ray's executor, every few seconds while it cannot place the workers: "Waiting for creating a
        # placement group of specs for 150 seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]. Check `ray status` ..."
        if message.startswith("Waiting for creating a placement group"):
            self._on_exception(message)

    def _on_value_error(self, message: str) -> None:
        # pydantic's wording: "Value error, Model architectures [...] are not supported for now."
        if message.startswith("Value error, "):
            self._on_exception(message)

    def _on_launching(self, message: str) -> None:
        match = _HEADLESS_VERSION.match(message)
        if match:
            self._set("vllm_version", match.group(1))

    def _on_processed(self, message: str) -> None:
        # The offline LLM class's progress bar over the prompts it was given (tqdm, no level): "Processed prompts: 100%
        # 1000/1000 [01:30<00:00, ...]". The engine serves them: it is up, as a server's first answered request says.
        if message.startswith("Processed prompts:") and self._start.stage < _READY:
            self._reach("ready")

    def _on_v0_stats(self, message: str) -> None:
        # V0's metrics.py every 5 s while it serves: "Avg prompt throughput: 0.0 tokens/s, Avg generation throughput:
        # 41.7 tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, ...": the server is up. Only V0 swaps.
        if message.startswith("Avg prompt throughput"):
            if ", Swapped: " in message:
                self._set("engine", "v0")
            if self._start.stage < _READY:
                self._reach("ready")

    def _on_engine(self, message: str) -> None:
        if message.startswith("Engine 0") and "Avg prompt throughput" in message:
            # V1's loggers.py every 10 s while it serves, "Engine 000: Avg prompt throughput: 596.8 tokens/s, ...":
            # the server is up, also where its access log is off and the start-up lines are not in an excerpt.
            if self._start.stage < _READY:
                self._reach("ready")
            return
        if message.startswith("EngineCore"):
            self._v1_prefix_seen = True
        if message.startswith(("EngineCore failed to start", "Engine core initialization failed", "WorkerProc failed to start")):
            # Only a marker: the exception that follows (if the log has it) says why.
            start = self._start
            if start.failure_marker is None and "See root cause above" not in message:
                start.failure_marker = {"category": "other_error", "line": message.strip(), "hint": _OTHER_ERROR_HINT}

    def _on_cuda(self, message: str) -> None:
        if message.startswith("CUDA error:"):
            self._on_exception(message)

    def _on_compile(self, message: str) -> None:
        # torch.compile runs on the loaded weights.
        if message.startswith(("torch.compile takes", "Compiling a graph for")):
            self._reach("weights_loaded")
            self._start.torch_compiling = False

    def _on_dynamo(self, message: str) -> None:
        # "Dynamo bytecode transform time: 7.58 s": Dynamo traced the model, Inductor compiles it now.
        if message.startswith("Dynamo bytecode transform time"):
            self._start.torch_compiling = True

    def _on_cli_error(self, message: str) -> None:
        # argparse: "vllm serve: error: argument --max-model-len: invalid ... value: 'lots'"
        if ": error: " in message:
            self._on_exception(message)

    def _on_usage(self, message: str) -> None:
        self._reach("starting")

    def _on_nccl_debug(self, message: str) -> None:
        # NCCL_DEBUG output ("host:pid:tid [0] NCCL INFO ..."), never traceback source lines; and NCCL's banner, also bare
        # among those lines ("NCCL version 2.20.5+cuda12.4", NCCL 2.20 under Ray in the corpus).
        debug = "NCCL WARN " in message or "NCCL INFO " in message
        if debug or message.startswith("NCCL version "):
            match = _NCCL_BANNER.search(message)
            if match:
                self._set("nccl_version", match.group(1))
        if debug:
            net = self._start.nccl_net
            net.read(message)
            # Only a channel between nodes says how data crosses them: one node also names a network it never uses.
            transport = net.channel_transport()
            if transport is not None:
                self._set("nccl_transport", transport)
                if transport == "NET/Socket":
                    self._warn("nccl_socket_transport")
            failure = _failure_said(message) if "NCCL WARN " in message else None
            if failure is not None and failure.category == "nccl_error":
                self._fail(failure.category, message, failure.hint(message, self._start))

    def _on_exception(self, message: str) -> None:
        if message.startswith("KeyboardInterrupt: terminated"):
            # vLLM's API server turns SIGTERM (docker stop) into KeyboardInterrupt("terminated"): a stop, not a failure.
            self._start.stopping = True
            return
        refused = _QUANT_UNSUPPORTED.search(message)
        if refused:
            self._set("quantization", refused.group(1))
        failure = _failure_said(message)
        if failure is not None:
            if failure.reads is not None:
                failure.reads(message, self._start)
            self._fail(failure.category, message, failure.hint(message, self._start))
        elif _EXCEPTION.match(message) or message.startswith("CUDA error:"):
            self._generic(message)

    def _generic(self, message: str) -> None:
        start = self._start
        if start.generic_error is None and not start.stopping and "See root cause above" not in message:
            start.generic_error = {
                "category": "other_error",
                "line": message.strip(),
                "hint": _OTHER_ERROR_HINT,
            }

    # -- result -------------------------------------------------------------------------------

    def facts(self) -> dict[str, Any]:
        start = self._start
        facts = start.facts
        stage = STAGES[start.stage] if start.stage >= 0 else None
        error = start.error or start.generic_error or start.failure_marker
        if error is not None:
            outcome = error["category"]
        elif stage == "ready":
            outcome = "ready"
        else:
            outcome = "loading"

        def fact(key: str) -> Any:
            if key in facts:
                return facts[key]
            return start.from_args.get(key)

        engine = facts.get("engine")
        if engine is None and self._v1_prefix_seen:
            engine = "v1"
        tensor_parallel, pipeline_parallel = fact("tensor_parallel_size"), fact("pipeline_parallel_size")
        world_size = facts.get("world_size")
        if world_size is None and isinstance(tensor_parallel, int) and isinstance(pipeline_parallel, int):
            # Not printed (V0, or before distributed init): the world is one rank per TP x PP shard.
            world_size = tensor_parallel * pipeline_parallel
        return {
            "vllm_version": facts.get("vllm_version"),
            "engine": engine,
            "architecture": facts.get("architecture"),
            "quantization": facts["quantization"] if "quantization" in facts else start.from_args.get("quantization"),
            "dtype": fact("dtype") if fact("dtype") != "auto" else None,
            "max_model_len": fact("max_model_len"),
            "tensor_parallel_size": tensor_parallel,
            "pipeline_parallel_size": pipeline_parallel,
            "attention_backend": facts.get("attention_backend"),
            "moe_backend": facts.get("moe_backend"),
            "load_format": facts.get("load_format"),
            "speculative_method": facts.get("speculative_method"),
            "custom_fusions": facts.get("custom_fusions"),
            "kv_cache_tokens": facts.get("kv_cache_tokens"),
            "max_concurrency": facts.get("max_concurrency"),
            "model_weights_gib": facts.get("model_weights_gib"),
            "nccl_version": facts.get("nccl_version"),
            "nccl_transport": facts.get("nccl_transport"),
            "world_size": world_size,
            "stage": stage,
            "outcome": outcome,
            "error": dict(error) if error is not None else None,
            "warnings": list(start.warnings),
        }

    def said(self, key: str) -> bool:
        """Whether the latest start's log has stated this fact (a null quantization included)."""
        return key in self._start.facts or key in self._start.from_args

    def stage_index(self) -> int:
        return self._start.stage

    @property
    def shm_stalls(self) -> int:
        return self._start.shm_stalls

    @property
    def compiling(self) -> bool:
        """Whether the latest start is inside torch.compile or FlashInfer's autotuning, by its start and end lines."""
        return self._start.torch_compiling or self._start.autotuning

    def stages_seen(self) -> list[str]:
        """The stages the latest start's log has shown, in the order they first appeared."""
        return list(self._start.stages_seen)


def parse_vllm_log(lines: Iterable[str]) -> dict[str, Any]:
    """Facts of a whole log, from any iterable of lines (a file object streams)."""
    scanner = VllmLogScanner()
    scanner.feed(lines)
    return scanner.facts()


def parse_vllm_log_text(text: str) -> dict[str, Any]:
    return parse_vllm_log(text.splitlines())
