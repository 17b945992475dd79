"""A model's facts read from real config.json files (fixtures/model_config/SOURCES.md, values read off by hand there)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._model_config import ModelConfigError, parse_model_config

FIXTURES = Path(__file__).parent / "fixtures" / "model_config"


@pytest.mark.parametrize(
    ("name", "architectures", "model_type", "quantization"),
    [
        ("qwen3-30b-a3b-fp8", ["Qwen3MoeForCausalLM"], "qwen3_moe", "fp8"),
        ("qwen3.5-122b-a10b-fp8", ["Qwen3_5MoeForConditionalGeneration"], "qwen3_5_moe", "fp8"),
        # Only the text model is quantized: vLLM reads text_config's quantization_config when the top level has none.
        ("kimi-k2.5", ["KimiK25ForConditionalGeneration"], "kimi_k25", "compressed-tensors"),
        ("gpt-oss-20b", ["GptOssForCausalLM"], "gpt_oss", "mxfp4"),
        ("qwen3-30b-a3b", ["Qwen3MoeForCausalLM"], "qwen3_moe", None),
        ("lab-tiny-qwen3-moe", ["Qwen3MoeForCausalLM"], "qwen3_moe", None),
        # ModelOpt: quant_method modelopt with quant_algo NVFP4 beside it, which vLLM's NVFP4 config overrides.
        ("qwen3.5-122b-a10b-nvfp4", ["Qwen3_5MoeForConditionalGeneration"], "qwen3_5_moe", "modelopt_fp4"),
        # Produced by ModelOpt, but named fp8: no ModelOpt override applies.
        ("deepseek-v4-flash-nvfp4", ["DeepseekV4ForCausalLM"], "deepseek_v4", "fp8"),
        # No quantization_config: the hf_quant_config.json beside it, by its producer and algorithm.
        ("llama-3.1-70b-instruct-fp8", ["LlamaForCausalLM"], "llama", "modelopt"),
        ("nemotron-3-nano-30b-a3b-nvfp4", ["NemotronHForCausalLM"], "nemotron_h", "modelopt_fp4"),
    ],
)
def test_a_real_config_gives_its_classes_type_and_quantization(name, architectures, model_type, quantization):
    config_text = (FIXTURES / f"{name}.config.json").read_text(encoding="utf-8")
    sidecar = FIXTURES / f"{name}.hf_quant_config.json"
    config = parse_model_config(config_text, sidecar.read_text(encoding="utf-8") if sidecar.exists() else None)
    assert config.as_dict() == {"architectures": architectures, "model_type": model_type, "quantization": quantization}


def test_without_its_hf_quant_config_a_modelopt_checkpoint_reads_as_unquantized():
    config = parse_model_config((FIXTURES / "llama-3.1-70b-instruct-fp8.config.json").read_text(encoding="utf-8"))
    assert config.quantization is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"architectures": ["Qwen3MoeForCausalLM"],', "config.json is not JSON: Expecting property name enclosed in double quotes"),
        ('["Qwen3MoeForCausalLM"]', "config.json is not a JSON object but list"),
        ('{"architectures": "Qwen3MoeForCausalLM"}', 'architectures is "Qwen3MoeForCausalLM", not a list of class names'),
        ('{"quantization_config": "fp8"}', 'quantization_config is "fp8", not an object'),
        ('{"text_config": {"quantization_config": {"quant_method": 4}}}', "text_config.quantization_config.quant_method is 4, not a string"),
    ],
)
def test_a_config_of_the_wrong_shape_is_refused_naming_the_field(text, message):
    with pytest.raises(ModelConfigError) as refused:
        parse_model_config(text)
    assert message in str(refused.value)
