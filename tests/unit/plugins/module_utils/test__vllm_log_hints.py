"""The advice of each failure wording, on the real logs that end with it.

The corpus's oracle (test__vllm_log_corpus.py) holds the class and the decisive line of an error, not its hint: the
hint is the parser's own advice. Here each hint is pinned word for word on a log whose failure calls for it.
"""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import parse_vllm_log

from .corpus import CORPUS, lab_log, lines


def public(name: str) -> list[str]:
    return lines(CORPUS / "public" / f"{name}.log")


def hint(log_lines: list[str]) -> tuple[str, str]:
    error = parse_vllm_log(log_lines)["error"]
    return error["category"], error["hint"]


OTHER_ERROR = "vLLM stopped on this error: read the lines before it in the log for its cause."
RAY_PLACEMENT = (
    "Ray could not place the workers: check that `ray status` shows every node with its GPU, and clear stale Ray sessions "
    "and placement groups from an earlier run."
)
NO_CACHE_MEMORY = "No memory is left for the KV cache: raise --gpu-memory-utilization or spread the model over more nodes."
OUT_OF_MEMORY = "The GPU ran out of memory: lower --gpu-memory-utilization or --max-model-len, or use more nodes."
NCCL = (
    "The ranks stopped talking over NCCL: check the fabric between the nodes (link, MTU, NCCL_SOCKET_IFNAME, "
    "NCCL_IB_HCA, GID index) and that every rank runs the same image and flags."
)
BAD_ARGUMENT = "vLLM refused its arguments: fix the flag this line names (see `vllm serve --help`)."


@pytest.mark.parametrize(
    ("name", "category", "advice"),
    [
        # "ValueError: Free memory on device cuda:0 (9.02/11.63 GiB) on startup is less than desired GPU memory utilization"
        (
            "0.19.0-qwen3-0.6b-rtx3060-startup-free-memory",
            "oom",
            "Less memory was free at start than --gpu-memory-utilization asks for: lower it, stop what holds memory (other "
            "containers, page cache: drop caches before launch), or spread the model over more nodes.",
        ),
        # "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB."
        ("unknown-qwen3-32b-v1-compose-cuda-oom-load", "oom", OUT_OF_MEMORY),
        # "ValueError: No available memory for the cache blocks.": no length that would fit is said.
        ("0.13.0+faa43dbf.nv26.01-qwen2.5-14b-fp8-gb10-kv-cache-no-memory", "kv_cache_insufficient", NO_CACHE_MEMORY),
        # "... the estimated maximum model length is 5632."
        (
            "unknown-unknown-tpu-v5e-8-v1-estimated-max-model-len-5632",
            "kv_cache_insufficient",
            "The KV cache holds at most 5632 tokens: set --max-model-len 5632 or lower, or give the KV cache more memory "
            "(--gpu-memory-utilization, --kv-cache-memory-bytes).",
        ),
        # "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error."
        ("unknown-unknown-v1-multiproc-ncclsystemerror-shm", "nccl_error", NCCL),
        # "ValueError: Cannot provide a placement group requiring 4.0 GPUs (...) within 1800 seconds."
        ("0.17.1-qwen35-27b-ray-placement-group-timeout", "ray_placement_timeout", RAY_PLACEMENT),
        # "ValueError: Current node has no GPU available."
        ("unknown-unknown-ray-no-gpu-enginecore", "ray_placement_timeout", RAY_PLACEMENT),
        # "Waiting for creating a placement group of specs for 150 seconds. specs=[{'GPU': 1.0}, {'GPU': 1.0}]."
        (
            "unknown-qwen3-0.6b-pg-wait-enginecore",
            "ray_placement_timeout",
            "Ray has waited 150 s to place the workers ([{'GPU': 1.0}, {'GPU': 1.0}]): the cluster lacks a node or a GPU "
            "they ask for. Check that `ray status` shows every node with its GPU, that each node joined with the address "
            "vLLM uses (VLLM_HOST_IP), and clear stale Ray sessions and placement groups from an earlier run.",
        ),
        # "ValueError: current platform cpu does not support ray."
        (
            "main-9532a6d-qwen3-4b-cpu-does-not-support-ray",
            "bad_argument",
            "This platform cannot use the Ray executor: use --distributed-executor-backend mp (with --nnodes across nodes).",
        ),
        # "Value error, Model architectures ['GptOssForCausalLM'] failed to be inspected."
        (
            "unknown-gpt-oss-inspect-failed-rocm",
            "other_error",
            "This vLLM has GptOssForCausalLM but could not import its module to inspect it: the lines before say why (a "
            "missing or mismatched package in the image, a GPU the module's kernels do not support).",
        ),
        # "Value error, Model architectures ['MiniCPMO'] failed to be inspected."
        (
            "unknown-minicpmo-inspect-failed-cpu-docker",
            "other_error",
            "This vLLM has MiniCPMO but could not import its module to inspect it: the lines before say why (a "
            "missing or mismatched package in the image, a GPU the module's kernels do not support).",
        ),
        # "RuntimeError: CUDA error: no kernel image is available for execution on the device"
        ("unknown-qwen3-8b-v100-compose-no-kernel-image", "other_error", OTHER_ERROR),
    ],
)
def test_a_public_log_s_failure_is_given_the_advice_of_its_wording(name, category, advice):
    assert hint(public(name)) == (category, advice)


@pytest.mark.parametrize(
    ("name", "category", "advice"),
    [
        # "vllm serve: error: argument --max-model-len: invalid human_readable_int_or_auto value: 'lots'"
        ("0.32.0-bad-argument-invalid-int", "bad_argument", BAD_ARGUMENT),
        # "vllm serve: error: unrecognized arguments: ..."
        ("0.32.0-bad-argument-unrecognized", "bad_argument", BAD_ARGUMENT),
        # vLLM 0.32.0's banner, then "Value error, Model architectures ['SparkinferTinyMoeForCausalLM'] are not supported"
        (
            "0.32.0-unsupported-architecture",
            "unsupported_architecture",
            "vLLM 0.32.0 has no SparkinferTinyMoeForCausalLM: use an image whose vLLM supports it.",
        ),
    ],
)
def test_a_captured_log_s_failure_is_given_the_advice_of_its_wording(name, category, advice):
    assert hint(lines(lab_log(name))) == (category, advice)


def test_an_architecture_of_a_later_vllm_names_the_first_release_that_has_it():
    # The captured refusal of an architecture, with the refused class renamed to one the parser knows the first vLLM
    # release of (FIRST_VLLM_WITH_ARCHITECTURE): the advice names that release.
    log = [line.replace("SparkinferTinyMoeForCausalLM", "Qwen3_5MoeForConditionalGeneration") for line in lines(lab_log("0.32.0-unsupported-architecture"))]
    assert hint(log) == (
        "unsupported_architecture",
        "vLLM 0.32.0 has no Qwen3_5MoeForConditionalGeneration: use an image whose vLLM supports it "
        "(Qwen3_5MoeForConditionalGeneration is in vLLM 0.17.0 and later).",
    )


def test_an_excerpt_without_the_banner_names_no_version():
    # The captured refusal read from after its banner (line 4, "version 0.32.0"), as a tail of a long log is.
    excerpt = lines(lab_log("0.32.0-unsupported-architecture"))[4:]
    assert hint(excerpt) == ("unsupported_architecture", "This vLLM has no SparkinferTinyMoeForCausalLM: use an image whose vLLM supports it.")
