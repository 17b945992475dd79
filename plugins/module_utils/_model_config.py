# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What a model's Hugging Face ``config.json`` says that vLLM's start-up must show: its classes and quantization.

vLLM resolves the model class from ``architectures`` and the quantization method from
``quantization_config.quant_method`` (its ``--quantization`` choices use the same names), and where the top
level has none, a multimodal model's ``text_config.quantization_config`` (vLLM 0.32.0,
``vllm/transformers_utils/model_arch_config_convertor.py``, ``get_quantization_config``). Not read here:
``compression_config`` (older compressed-tensors checkpoints) and the ModelOpt producer block that vLLM maps to
``modelopt``/``modelopt_fp4``, for which no real config.json is in the fixtures yet. No I/O here.
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


def parse_model_config(text: str) -> ModelConfig:
    """The facts of a config.json's text."""
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise ModelConfigError(f"not JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ModelConfigError(f"not a JSON object but {type(config).__name__}")
    where = "quantization_config"
    quantization = _object(config.get("quantization_config"), where)
    if quantization is None:
        where = "text_config.quantization_config"
        quantization = _object((_object(config.get("text_config"), "text_config") or {}).get("quantization_config"), where)
    return ModelConfig(
        architectures=_strings(config.get("architectures"), "architectures"),
        model_type=_string(config.get("model_type"), "model_type"),
        quantization=_string((quantization or {}).get("quant_method"), f"{where}.quant_method"),
    )
