"""model_config_info on a model directory: a real config.json, none, one that is not JSON."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import model_config_info

from .module_harness import ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "model_config"


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_model_directory_gives_its_config(tmp_path, check_mode):
    shutil.copy(FIXTURES / "qwen3.5-122b-a10b-fp8.config.json", tmp_path / "config.json")
    result = run_module(model_config_info.main, {"path": str(tmp_path), "_ansible_check_mode": check_mode})
    assert result["changed"] is False
    assert result["model_config"] == {
        "file": str(tmp_path / "config.json"),
        "exists": True,
        "architectures": ["Qwen3_5MoeForConditionalGeneration"],
        "model_type": "qwen3_5_moe",
        "quantization": "fp8",
    }


def test_a_directory_without_config_json_is_a_reading(tmp_path):
    result = run_module(model_config_info.main, {"path": str(tmp_path / "missing")})
    assert result["model_config"] == {
        "file": str(tmp_path / "missing" / "config.json"),
        "exists": False,
        "architectures": [],
        "model_type": None,
        "quantization": None,
    }


def test_a_config_json_that_is_not_json_fails_naming_the_file(tmp_path):
    (tmp_path / "config.json").write_text('{"architectures": [', encoding="utf-8")
    with pytest.raises(ModuleFail) as failed:
        run_module(model_config_info.main, {"path": str(tmp_path)})
    assert failed.value.result["msg"].startswith(f"the model in {tmp_path} cannot be read: config.json is not JSON: ")


def test_a_modelopt_checkpoint_is_read_with_the_hf_quant_config_beside_it(tmp_path):
    for name in ("config.json", "hf_quant_config.json"):
        shutil.copy(FIXTURES / f"nemotron-3-nano-30b-a3b-nvfp4.{name}", tmp_path / name)
    result = run_module(model_config_info.main, {"path": str(tmp_path)})
    assert result["model_config"]["quantization"] == "modelopt_fp4"
