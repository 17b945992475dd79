"""Real logs read as a caller meets them: cut to an excerpt (a tail, a head, one line), or as `docker logs` gives them.

The corpus's oracle (test__vllm_log_corpus.py) reads each log whole, in universal-newline mode. A wait polls a log as it
grows, `docker logs --tail` gives its end, and ContainerLog reads docker's output split at newlines only; here each
excerpt is cut from a corpus log, or is one line quoted from a public report, and must still give exactly what it says.
The comments number lines as the log does; a trace numbers them from the excerpt's first line.
"""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

from .corpus import lab_log, lines, public, text, trace


def test_docker_s_lines_keep_the_progress_bar_s_carriage_returns_and_its_state_still_counts():
    # The captured start as `docker logs` gives it, split at newlines only, from its line 40 on: the safetensors progress
    # bar's lines start with a carriage return, "\rLoading safetensors checkpoint shards:   0% Completed | 0/1 [00:00<?,
    # ?it/s]", and line 43 is "Loading weights took 0.01 seconds".
    raw = text(lab_log("0.32.0-ready-tp1")).split("\n")
    assert raw[39].startswith("\rLoading safetensors checkpoint shards:   0% Completed | 0/1")
    assert trace(raw[39:])[:2] == [(1, "loading_weights"), (4, "weights_loaded")]
    assert parse_vllm_log(raw) == parse_vllm_log(lines(lab_log("0.32.0-ready-tp1")))


def test_the_api_server_s_pointer_to_a_root_cause_above_is_not_itself_the_error():
    # The tail of the captured KV cache failure from the API server's last line, "RuntimeError: Engine core
    # initialization failed. See root cause above. Failed core proc(s): {}": the cause is not in the excerpt.
    log = lines(lab_log("0.32.0-kv-cache-insufficient"))
    tail = log[[line.startswith("RuntimeError: Engine core initialization failed. See root cause above.") for line in log].index(True) :]
    facts = parse_vllm_log(tail)
    assert (facts["outcome"], facts["error"], facts["stage"]) == ("loading", None, None)


def test_a_tail_from_the_engine_s_untagged_refusal_of_too_little_free_memory_fails_on_it():
    # The tail from line 103, the engine's traceback's last line without a level or source tag, "(EngineCore_DP0
    # pid=167) ValueError: Free memory on device (4.04/119.63 GiB) on startup is ...": its prefix ends at the first ") ",
    # not at "GiB) on startup".
    log = public("0.13.0+faa43dbf.nv26.01-nomic-embed-text-v1.5-gb10-startup-free-memory")
    assert log[102].startswith("(EngineCore_DP0 pid=167) ValueError: Free memory on device")
    error = parse_vllm_log(log[102:])["error"]
    assert (error["category"], error["line"]) == (
        "oom",
        "ValueError: Free memory on device (4.04/119.63 GiB) on startup is less than desired GPU memory utilization (0.15, "
        "17.94 GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
    )


def test_v0_s_untagged_block_counts_reach_kv_cache_ready():
    # A V0 excerpt copied without prefixes or source tags: "Loading model weights took 14.9888 GB", then on line 3
    # "# GPU blocks: 1478, # CPU blocks: 2048" (a first word of one character).
    assert trace(public("unknown-llama3.1-8b-rtx3090-v0-max-seq-len-29000-kv-cache-23648")) == [(1, "weights_loaded"), (3, "kv_cache_ready")]


def test_an_engine_s_cache_config_line_is_not_a_served_request_s_statistics():
    # Line 44, "Engine 000: vllm cache_config_info with initialization after num_gpu_blocks is: 27873", comes before the
    # API server starts: only "Engine 000: Avg prompt throughput: ..." says the server is up.
    assert trace(public("0.10.2-qwen2.5-3b-fp16-v1-ready"))[-4:] == [
        (38, "kv_cache_ready"),
        (41, "graphs_captured"),
        (51, "api_starting"),
        (86, "ready"),  # "INFO:     Application startup complete."
    ]


def test_nccl_s_bare_version_banner_gives_the_nccl_version():
    # Line 7 of a Ray start with NCCL_DEBUG=INFO, alone: "NCCL version 2.20.5+cuda12.4".
    assert parse_vllm_log(public("unknown-ray-two-node-pynccl-nccl-net-ib-soft-roce-excerpt")[6:7])["nccl_version"] == "2.20.5"


def test_v0_0_7_s_blocks_named_after_cuda_reach_kv_cache_ready_on_their_line():
    # vLLM 0.7.2's executor names the blocks after the device: line 15 is "# CUDA blocks: 1353, # CPU blocks: 1024",
    # before "Maximum concurrency for 512 tokens per request: 42.28x".
    log = public("0.7.2-llama-3.1-8b-instruct-bnb-4bit-bitsandbytes-unsloth-t4-markdown-links")
    assert (15, "kv_cache_ready") in trace(log)


def test_nccl_s_warning_of_a_failed_cuda_allocation_is_not_itself_the_failure():
    # NCCL's warning under NCCL_DEBUG=INFO, as NVIDIA/nccl#962 quotes it: the exception after it (there
    # "torch.distributed.DistBackendError: NCCL error in: ...") says the start failed, not this line.
    warning = "node:2134736:2285781 [0] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'"
    facts = parse_vllm_log([warning])
    assert (facts["outcome"], facts["error"]) == ("loading", None)
