# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What vllm_serve's gate expects vLLM's log to say, and where each expectation came from: the model's config.json, the
recipe's expect section, the parallel sizes settled, RoCE's transport, the spec's loader and speculative decoding; the
inventory's vllm_serve_expect over them all. No I/O here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import lever_expectations


def gate_expectations(model: Mapping, recipe: Mapping, settings: Mapping, spec: Mapping, given: Mapping, *, rdma: bool) -> dict[str, dict[str, Any]]:
    """``{"expect": ..., "sources": ...}``: later layers win; a key's source is the layer that set it last, where that
    layer is one a contradiction should name (the recipe, the serve spec), else none.

    model: the architecture and quantization of the model's config.json; recipe: vllm_recipe's result ({} for none);
    settings: vllm_serve_settings' result; spec: the rank's serve spec ({} before it was settled); given: vllm_serve_expect."""
    recipe_expect = recipe.get("expect")
    if not isinstance(recipe_expect, Mapping):
        recipe_expect = {}
    layers: list[tuple[Mapping, str | None]] = [
        (model, None),
        (recipe_expect, f"recipe {recipe.get('name', '')}".strip()),
        ({key: int(settings[key]) for key in ("tensor_parallel_size", "pipeline_parallel_size")}, None),
        ({"nccl_transport": "NET/IB"} if rdma else {}, None),
        (lever_expectations(spec) if spec else {}, "the serve spec"),
        (given, None),
    ]
    expect: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for layer, source in layers:
        for key, value in layer.items():
            expect[key] = value
            if source:
                sources[key] = source
            else:
                sources.pop(key, None)
    return {"expect": expect, "sources": sources}
