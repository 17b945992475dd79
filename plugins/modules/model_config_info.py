#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: model_config_info
short_description: Read a model directory's config.json on this node, for the facts vLLM's start-up must show
version_added: 0.1.0
description:
  - Reads C(config.json) in a Hugging Face model directory and returns whether it is there, the model classes it names
    (C(architectures); vLLM tries the first), its C(model_type), and its quantization method, named as vLLM's
    C(--quantization) choices are.
  - The method is settled as vLLM 0.32 settles it, from C(quantization_config), else the C(hf_quant_config.json) beside
    C(config.json) (ModelOpt 0.29 and before), else a multimodal model's C(text_config.quantization_config); a ModelOpt
    checkpoint's FP8 is C(modelopt), its NVFP4 C(modelopt_fp4). Methods vLLM swaps for another by GPU (C(gptq) for
    C(gptq_marlin), C(awq) for C(awq_marlin)) are returned as the checkpoint names them.
  - A model directory without C(config.json) is a reading (RV(model_config.exists) false), not an error; a C(config.json)
    that is not JSON, or whose fields have the wrong types, fails the module, naming the file and what is wrong.
  - "Read-only: C(changed) is always false."
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
options:
  path:
    description: The model directory, the one given to C(vllm serve).
    type: path
    required: true
"""

EXAMPLES = r"""
- name: Read the model's config.json
  sparkinfer.cluster.model_config_info:
    path: /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8
  register: __model

- name: Assert the model is there
  ansible.builtin.assert:
    that:
      - __model.model_config.exists
    fail_msg: "{{ __model.model_config.file }} does not exist"
"""

RETURN = r"""
model_config:
  description: What the model directory's config.json says.
  returned: always
  type: dict
  contains:
    file:
      description: The config.json read.
      type: str
      returned: always
      sample: /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8/config.json
    exists:
      description: Whether the model directory has a config.json.
      type: bool
      returned: always
      sample: true
    architectures:
      description: The model classes it names, in its order (empty when it names none or does not exist).
      type: list
      elements: str
      returned: always
      sample: [Qwen3_5MoeForConditionalGeneration]
    model_type:
      description: Its C(model_type), or null.
      type: str
      returned: always
      sample: qwen3_5_moe
    quantization:
      description: Its C(quantization_config.quant_method), or null for a model that is not quantized.
      type: str
      returned: always
      sample: fp8
"""

import os

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._model_config import ModelConfig, ModelConfigError, parse_model_config


def _read_if_there(module: AnsibleModule, path: str) -> str | None:
    """The text of a file of the model directory, or None when it is not there."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        module.fail_json(msg=f"cannot read {path}: {exc.strerror or exc}")
        return None  # fail_json exits


def main() -> None:
    module = AnsibleModule(argument_spec={"path": {"type": "path", "required": True}}, supports_check_mode=True)
    config_file = os.path.join(module.params["path"], "config.json")
    text = _read_if_there(module, config_file)
    if text is None:
        absent = ModelConfig(architectures=[], model_type=None, quantization=None)
        module.exit_json(changed=False, model_config={"file": config_file, "exists": False, **absent.as_dict()})
    hf_quant_config_text = _read_if_there(module, os.path.join(module.params["path"], "hf_quant_config.json"))
    try:
        config = parse_model_config(text, hf_quant_config_text)
    except ModelConfigError as exc:
        module.fail_json(msg=f"the model in {module.params['path']} cannot be read: {exc}")
    module.exit_json(changed=False, model_config={"file": config_file, "exists": True, **config.as_dict()})


if __name__ == "__main__":
    main()
