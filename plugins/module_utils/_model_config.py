# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What a model's Hugging Face ``config.json`` says that vLLM's start-up must show: its classes and quantization.

The quantization method is read the way vLLM 0.32.0 settles it, for the checkpoints the fixtures hold:
``quantization_config`` in ``config.json``; without one, the ``hf_quant_config.json`` beside it, where ModelOpt 0.29
and before saved it (``vllm/transformers_utils/config.py``); without either, a multimodal model's
``text_config.quantization_config`` (``model_arch_config_convertor.py``, ``get_quantization_config``). A ModelOpt
checkpoint's method follows from its algorithm, as vLLM's ModelOpt configs override it
(``model_executor/layers/quantization/modelopt.py``): FP8 is ``modelopt``, NVFP4 ``modelopt_fp4``. Not read here, for
want of a real checkpoint in the fixtures: ``compression_config`` (older compressed-tensors), ModelOpt's MXFP8 and FP8
variants, and the GPU-dependent overrides (``gptq`` to ``gptq_marlin``, ``awq`` to ``awq_marlin``), which the roles'
``*_expect`` variables cover. No I/O here.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any


class ModelConfigError(ValueError):
    """Raised when the text is not a config.json the facts can be read from."""


@dataclass(frozen=True)
class ModelConfig:
    """The facts of a config.json: its model classes (the first is the one vLLM tries first), type and quantization."""

    architectures: list
    model_type: str | None
    quantization: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def _strings(value: Any, what: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ModelConfigError(f"{what} is {json.dumps(value)[:200]}, not a list of class names")
    return list(value)


def _string(value: Any, what: str) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise ModelConfigError(f"{what} is {json.dumps(value)[:200]}, not a string")


def _object(value: Any, what: str) -> dict | None:
    if value is None or isinstance(value, dict):
        return value
    raise ModelConfigError(f"{what} is {json.dumps(value)[:200]}, not an object")


def _json_object(text: str, what: str) -> dict:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelConfigError(f"{what} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ModelConfigError(f"{what} is not a JSON object but {type(value).__name__}")
    return value


def _modelopt_method(algorithm: str) -> str | None:
    """The method vLLM's ModelOpt configs override a ModelOpt checkpoint's to, by its algorithm."""
    if algorithm == "FP8":
        return "modelopt"
    if "FP4" in algorithm:
        return "modelopt_fp4"
    return None


def _quant_method(quantization: dict, where: str) -> str | None:
    method = _string(quantization.get("quant_method"), f"{where}.quant_method")
    nested = _object(quantization.get("quantization"), f"{where}.quantization")
    # hf_quant_config.json names no method: vLLM takes ModelOpt's from its producer.
    if method is None and (_object(quantization.get("producer"), f"{where}.producer") or {}).get("name") == "modelopt":
        method = "modelopt"
    if method is None:
        return None
    algorithm = nested.get("quant_algo") if nested is not None else quantization.get("quant_algo")
    return _modelopt_method(str(algorithm or "").upper()) or method


def parse_model_config(text: str, hf_quant_config_text: str | None = None) -> ModelConfig:
    """The facts of a config.json's text, and of the hf_quant_config.json beside it when there is one."""
    config = _json_object(text, "config.json")
    where = "quantization_config"
    quantization = _object(config.get("quantization_config"), where)
    if quantization is None and hf_quant_config_text is not None:
        where = "hf_quant_config.json"
        quantization = _json_object(hf_quant_config_text, where)
    if quantization is None:
        where = "text_config.quantization_config"
        quantization = _object((_object(config.get("text_config"), "text_config") or {}).get("quantization_config"), where)
    return ModelConfig(
        architectures=_strings(config.get("architectures"), "architectures"),
        model_type=_string(config.get("model_type"), "model_type"),
        quantization=_quant_method(quantization, where) if quantization is not None else None,
    )
