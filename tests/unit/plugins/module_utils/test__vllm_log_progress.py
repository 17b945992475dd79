"""The stages a start goes through, line by line, as a wait that polls the log sees them.

The corpus's oracle (test__vllm_log_corpus.py) holds only the last stage a whole log reaches. A wait reads the log as it
grows: here real logs are fed one line at a time, and each stage must appear on the line that says it (the line numbers
are the log's own, read off it), not on a later one that the same stage also follows from.
"""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import VllmLogScanner

from .corpus import lab_log, lines, public, trace


def test_a_v0_server_s_stages_each_appear_on_the_line_that_says_it():
    assert trace(public("0.6.3.post1-llama3.1-8b-pp4-mp-ready")) == [
        (1, "starting"),  # "vLLM API server version 0.6.3.post1"
        (2, "args_parsed"),  # "args: Namespace(subparser='serve', ..."
        (8, "engine_config"),  # "Initializing an LLM engine (v0.6.3.post1) with config: ..."
        (18, "distributed_init"),  # "vLLM is using nccl==2.20.5"
        (22, "loading_weights"),  # "Starting to load model meta-llama/Llama-3.1-8B-Instruct..."
        (34, "weights_loaded"),  # "Loading model weights took 4.2599 GB"
        (38, "kv_cache_ready"),  # "# GPU blocks: 70165, # CPU blocks: 8192"
        (48, "graphs_captured"),  # "(VllmWorkerProcess pid=488952) ... Graph capturing finished in 35 secs."
        (53, "api_starting"),  # "Available routes are:"
        (68, "ready"),  # "INFO:     Application startup complete."
    ]


def test_a_v1_server_s_stages_each_appear_on_the_line_that_says_it():
    assert trace(public("0.8.5.post1-deepseek-r1-14b-v1-flash-attn-ready")) == [
        (2, "starting"),  # "vLLM API server version 0.8.5.post1"
        (3, "args_parsed"),  # "args: Namespace(subparser='serve', ..."
        (7, "engine_config"),  # "Initializing a V1 LLM engine (v0.8.5.post1) with config: ..."
        (9, "distributed_init"),  # "rank 0 in world size 1 is assigned as DP rank 0, PP rank 0, TP rank 0"
        (12, "loading_weights"),  # "Starting to load model /opt/llm/deepseek-r1-14b..."
        (20, "weights_loaded"),  # "Loading weights took 3.83 seconds"
        (26, "kv_cache_ready"),  # "GPU KV cache size: 32,832 tokens"
        (28, "graphs_captured"),  # "Graph capturing finished in 33 secs, took 0.70 GiB"
        (34, "api_starting"),  # "Starting vLLM API server on http://0.0.0.0:8000"
        (61, "ready"),  # "INFO:     Application startup complete."
    ]


def test_a_mp_leader_reaches_distributed_init_when_it_leads_the_dp_group():
    # The leader of a two-node mp launch, waiting for its follower: its last line is its own worker's distributed init.
    assert trace(lines(lab_log("0.32.0-mp-nnodes2-leader-waiting-for-follower"))) == [
        (4, "starting"),  # the banner's "version 0.32.0"
        (8, "args_parsed"),  # "non-default args: {...}"
        (10, "architecture_resolved"),  # "Resolved architecture: Qwen3MoeForCausalLM"
        (19, "engine_config"),  # "Initializing a V1 LLM engine (v0.32.0) with config: ..."
        (20, "distributed_init"),  # "DP group leader: node_rank=0, ..., world_size=2, local_world_size=1"
    ]


def test_an_excerpt_from_the_routes_on_starts_at_api_starting():
    # `docker logs --tail 16` of the V0 server: its routes, then uvicorn's lines.
    assert trace(public("0.6.3.post1-llama3.1-8b-pp4-mp-ready")[-16:]) == [
        (1, "api_starting"),  # "Route: /openapi.json, Methods: HEAD, GET"
        (15, "ready"),  # "INFO:     Application startup complete."
    ]


def test_an_excerpt_of_uvicorn_s_last_line_is_ready():
    # `docker logs --tail 1` of the V0 server: "INFO:     Uvicorn running on socket ('0.0.0.0', 8000) (Press CTRL+C to quit)"
    assert trace(public("0.6.3.post1-llama3.1-8b-pp4-mp-ready")[-1:]) == [(1, "ready")]


def test_an_excerpt_that_starts_in_the_safetensors_progress_bar_starts_at_loading_weights():
    # The V0 server's log from its line 30 on: "Loading safetensors checkpoint shards:   0% Completed | 0/4 ..."
    assert trace(public("0.6.3.post1-llama3.1-8b-pp4-mp-ready")[29:]) == [
        (1, "loading_weights"),  # line 30, the progress bar
        (5, "weights_loaded"),  # line 34, "Loading model weights took 4.2599 GB"
        (9, "kv_cache_ready"),  # line 38, "# GPU blocks: 70165, # CPU blocks: 8192"
        (19, "graphs_captured"),  # line 48, "Graph capturing finished in 35 secs."
        (24, "api_starting"),  # line 53, "Available routes are:"
        (39, "ready"),  # line 68, "Application startup complete."
    ]


def test_an_excerpt_that_starts_in_the_pt_progress_bar_starts_at_loading_weights():
    # An offline V0 run's log from its line 6 on: "Loading pt checkpoint shards:   0% Completed | 0/1 ..."
    assert trace(public("0.6.4.post1-opt-125m-turing-xformers-offline-ready")[5:]) == [
        (1, "loading_weights"),  # line 6, the progress bar
        (7, "weights_loaded"),  # line 12, "Loading model weights took 0.2389 GB"
        (9, "kv_cache_ready"),  # line 14, "# GPU blocks: 10900, # CPU blocks: 7281"
        (13, "graphs_captured"),  # line 18, "Graph capturing finished in 19 secs, took 0.12 GiB"
    ]


def test_a_torch_compile_lasts_from_dynamo_s_trace_to_its_total():
    log = public("0.8.5.post1-deepseek-r1-14b-v1-flash-attn-ready")
    scanner = VllmLogScanner()
    scanner.feed(log[:22])  # up to "Using cache directory: ... for vLLM's torch.compile"
    assert scanner.compiling is False
    scanner.feed(log[22:23])  # "Dynamo bytecode transform time: 11.47 s"
    assert scanner.compiling is True
    scanner.feed(log[23:24])  # "Directly load the compiled graph(s) for shape None from the cache, took 8.559 s"
    assert scanner.compiling is True
    scanner.feed(log[24:25])  # "torch.compile takes 11.47 s in total"
    assert scanner.compiling is False


def test_the_arguments_alone_give_the_sizes_asked_and_no_dtype_for_auto():
    # Polled right after "args: Namespace(..., dtype='auto', max_model_len=32768, ..., quantization=None, ...,
    # pipeline_parallel_size=1, tensor_parallel_size=1, ...)": the engine's config, with the dtype it resolved, is not
    # in the log yet; no quantization was asked for.
    scanner = VllmLogScanner()
    scanner.feed(public("0.8.5.post1-deepseek-r1-14b-v1-flash-attn-ready")[:3])
    facts = scanner.facts()
    assert (facts["stage"], facts["dtype"], facts["max_model_len"], facts["quantization"]) == ("args_parsed", None, 32768, None)
    assert (facts["tensor_parallel_size"], facts["pipeline_parallel_size"], facts["world_size"]) == (1, 1, 1)


def test_a_second_shared_memory_stall_after_ready_is_the_one_that_warns_the_engine_stopped_answering():
    # An excerpt of a served Ascend start: "Application startup complete." on line 3, then a stall line from each of
    # its two engines every minute from line 12 on ("No available shared memory broadcast block found in 60 seconds.").
    log = public("0.11.0-ascend-dp2-tp4-full-decode-only-shm-broadcast-stall-after-ready-excerpt")
    scanner = VllmLogScanner()
    scanner.feed(log[:12])
    assert (scanner.shm_stalls, scanner.facts()["warnings"]) == (1, ["shm_broadcast_stall"])
    scanner.feed(log[12:13])
    assert (scanner.shm_stalls, scanner.facts()["warnings"]) == (2, ["shm_broadcast_stall", "shm_broadcast_stall_after_ready"])
    scanner.feed(log[13:])
    assert scanner.shm_stalls == 8


def test_an_excerpt_from_an_unquantized_moe_layer_s_line_names_its_backend_in_the_enum_s_spelling():
    # The Laguna INT4 log from its line 34 on: "Using FlashInfer CUTLASS Unquantized MoE backend out of potential
    # backends: ['FlashInfer TRTLLM', 'FlashInfer CUTLASS', ...]" (the line before it, the quantized layers' 'MARLIN',
    # is left out).
    scanner = VllmLogScanner()
    scanner.feed(public("0.25.1-laguna-int4-compressed-tensors-marlin-moe-kv-cache-insufficient")[33:])
    assert scanner.facts()["moe_backend"] == "FLASHINFER_CUTLASS"
