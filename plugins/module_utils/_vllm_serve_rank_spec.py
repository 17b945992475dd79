# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""The serve spec a rank of vllm_serve runs: the settled serve settings (module_utils/_vllm_serve_settings.py), then
what the role itself decides: the model and its served name, the parallel sizes, the executor, the API's address, the
head's TLS files and the API guard's middleware. The same on every rank but the head's TLS files. No I/O here."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

from ansible.module_utils.parsing.convert_bool import boolean

from ansible_collections.sparkinfer.cluster.plugins.module_utils._recipe import SERVE_ROLE_KEYS
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_settings import recipe_serve


def rank_spec(settings: Mapping, recipe: Mapping, variables: Mapping, rank: Mapping) -> dict[str, Any]:
    """settings: vllm_serve_settings' result; recipe: vllm_recipe's ({} for none); variables: the role's, by their full
    names; rank: this rank's part, ``head`` (bool), ``api_host`` (the head's), ``tls_mounts`` (certfile and keyfile as
    the container sees them) and ``middleware`` (the API guard's import path)."""
    tensor, pipeline = int(settings["tensor_parallel_size"]), int(settings["pipeline_parallel_size"])
    executor = variables["vllm_serve_executor"]
    model = variables["vllm_serve_model"]
    tls_here = bool(variables["vllm_serve_tls_certfile"]) and boolean(rank["head"])
    guard = ["--middleware", rank["middleware"]] if boolean(variables["vllm_serve_api_guard_enabled"]) else []
    spec = {key: value for key, value in settings.items() if key not in SERVE_ROLE_KEYS}
    spec.update(
        model=model,
        served_model_name=variables["vllm_serve_served_model_name"] or settings.get("served_model_name") or posixpath.basename(model),
        tensor_parallel_size=tensor,
        pipeline_parallel_size=pipeline,
        # One rank needs no executor: vLLM picks its own in-process one.
        distributed_executor_backend=executor if tensor * pipeline > 1 or executor == "ray" else None,
        gpu_memory_utilization=float(settings["gpu_memory_utilization"]),
        enforce_eager=boolean(settings["enforce_eager"]),
        host=rank["api_host"],
        port=int(variables["vllm_serve_port"]),
        # The head serves the API: the certificate is the head's alone (headless ranks serve no API).
        ssl_certfile=rank["tls_mounts"]["certfile"] if tls_here else None,
        ssl_keyfile=rank["tls_mounts"]["keyfile"] if tls_here else None,
        extra_args=list(recipe_serve(recipe).get("extra_args", [])) + list(variables["vllm_serve_extra_args"]) + guard,
    )
    return spec
