"""The vllm_image_info parsers on real `docker image inspect` and probe outputs (fixtures/vllm_image/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import (
    PROBE_MARKER,
    VllmImageError,
    architecture_gate_message,
    missing_architectures,
    parse_image_inspect,
    parse_probe_output,
)

FIXTURES = Path(__file__).parent / "fixtures" / "vllm_image"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_inspect_of_the_lab_vllm_image():
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    assert image["id"].startswith("sha256:")
    assert image["entrypoint"] == ["vllm", "serve"]
    assert image["cmd"] == []
    assert image["env"]["PATH"].startswith("/opt/vllm/bin:")
    assert image["repo_digests"] == []
    assert (image["architecture"], image["os"]) == ("amd64", "linux")
    assert image["size_bytes"] > 2_000_000_000


def test_inspect_of_an_env_var_entrypoint_image():
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-envvar-entrypoint.inspect.json"))
    assert image["entrypoint"] == ["/usr/local/bin/start.sh"]


@pytest.mark.parametrize("text", ["", "{}", "[]", "[1, 2]", "not json"])
def test_inspect_refuses_what_is_not_one_image(text):
    with pytest.raises(VllmImageError):
        parse_image_inspect(text)


def test_probe_of_the_lab_vllm_image():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    assert (facts["vllm_version"], facts["vllm_distribution"]) == ("0.32.0", "vllm-cpu")
    assert "Qwen3MoeForCausalLM" in facts["architectures"]
    assert "Qwen3_5MoeForConditionalGeneration" in facts["architectures"]
    assert facts["architectures"] == sorted(facts["architectures"])
    assert facts["architectures_from_source_only"] is False
    assert facts["previously_supported"]["QWenLMHeadModel"] == "0.23.0"
    assert facts["ray_version"] == "2.60.0"
    assert (facts["torch_version"], facts["cuda_version"], facts["cuda_arch_list"]) == ("2.13.0+cpu", None, [])
    assert (facts["entrypoint_env_vars"], facts["env_configured_entrypoint"]) == ([], False)
    assert facts["probe_errors"] == {}


def test_probe_finds_the_variables_an_entrypoint_reads_and_vllm_ignores():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-envvar-entrypoint.probe.txt"))
    assert facts["entrypoint_env_vars"] == ["VLLM_GPU_MEMORY_UTIL", "VLLM_MAX_MODEL_LEN"]
    assert facts["env_configured_entrypoint"] is True


def test_probe_of_an_image_without_vllm_says_what_failed():
    facts = parse_probe_output(fixture("no-vllm-lab-node.probe.txt"))
    assert facts["vllm_version"] is None
    assert facts["architectures"] == []
    assert facts["ray_version"] is None
    assert facts["probe_errors"]["architectures"] == "ModuleNotFoundError: No module named 'vllm'"


def test_probe_output_is_found_among_other_lines():
    line = fixture("vllm-cpu-0.32.0-lab.probe.txt").strip()
    assert parse_probe_output("INFO import noise\n" + line + "\n")["vllm_version"] == "0.32.0"


@pytest.mark.parametrize("text", ["", "Traceback (most recent call last):\n", PROBE_MARKER + "{broken"])
def test_probe_without_a_result_is_an_error(text):
    with pytest.raises(VllmImageError):
        parse_probe_output(text)


def test_the_gate_passes_an_image_that_has_the_model_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    assert missing_architectures(["Qwen3MoeForCausalLM"], facts) == []


def test_the_gate_names_the_first_vllm_with_a_class_an_old_image_lacks():
    # vLLM 0.16.0 had no Qwen3.5 MoE class (SPARK_FACTS 2.5): the same facts with an older version.
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    old = {**facts, "vllm_version": "0.16.0", "architectures": [a for a in facts["architectures"] if not a.startswith("Qwen3_5")]}
    missing = missing_architectures(["Qwen3_5MoeForConditionalGeneration"], old)
    assert missing == [{"architecture": "Qwen3_5MoeForConditionalGeneration", "first_vllm": "0.17.0", "last_vllm": None}]
    message = architecture_gate_message("nvcr.io/nvidia/vllm:26.02-py3", old, missing)
    assert message == (
        "nvcr.io/nvidia/vllm:26.02-py3 (vLLM 0.16.0) has no Qwen3_5MoeForConditionalGeneration; it needs vLLM 0.17.0 or later: use an image with such a vLLM."
    )


def test_the_gate_names_the_last_vllm_with_a_dropped_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    missing = missing_architectures(["QWenLMHeadModel"], facts)
    assert "vLLM dropped it after 0.23.0: use an image with vLLM 0.23.0 or earlier" in architecture_gate_message("img", facts, missing)


def test_the_gate_on_an_image_without_vllm():
    facts = parse_probe_output(fixture("no-vllm-lab-node.probe.txt"))
    missing = missing_architectures(["Qwen3MoeForCausalLM"], facts)
    assert architecture_gate_message("sparkinfer-lab-node:latest", facts, missing) == (
        "sparkinfer-lab-node:latest has no vLLM that imports (ModuleNotFoundError: No module named 'vllm'): use a vLLM serving image."
    )


def test_the_gate_on_an_unknown_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    missing = missing_architectures(["SparkinferTinyMoeForCausalLM"], facts)
    assert architecture_gate_message("img", facts, missing) == (
        "img (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM; use an image whose vLLM lists it (vllm_image_info returns the image's architectures)."
    )
