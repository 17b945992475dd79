# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The persistent caches a vLLM container mounts: host directories to volumes and the variables that point vLLM at them."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

# Cache name, the variable its program reads, where the container sees it.
CACHES = (
    # torch.compile's artifacts (AOT-compiled graphs, Inductor), the model-class inspection cache, vLLM's assets.
    ("vllm", "VLLM_CACHE_ROOT", "/var/cache/sparkinfer/vllm"),
    # Triton's compiled kernels.
    ("triton", "TRITON_CACHE_DIR", "/var/cache/sparkinfer/triton"),
    # FlashInfer's JIT kernels (under .cache/flashinfer in this base).
    ("flashinfer", "FLASHINFER_WORKSPACE_BASE", "/var/cache/sparkinfer/flashinfer"),
    # The Hugging Face hub's downloads and tokenizers.
    ("huggingface", "HF_HOME", "/var/cache/sparkinfer/huggingface"),
)
_BY_NAME = {name: (variable, container_dir) for name, variable, container_dir in CACHES}
# Docker's volume syntax (HOST:CONTAINER) and the environment file (one NAME=value a line) cannot carry these.
_FORBIDDEN = (":", ",", "\n", "\r", "\x00")


def vllm_cache_mounts(dirs, variable="the cache directories"):
    """``{"volumes": ["HOST:CONTAINER", ...], "env": {NAME: CONTAINER, ...}}`` for a mapping of cache name -> host directory."""
    if not isinstance(dirs, dict):
        raise AnsibleFilterError(f"{variable} must be a mapping of cache name to host directory, got {type(dirs).__name__}")
    unknown = sorted(set(dirs) - set(_BY_NAME))
    if unknown:
        raise AnsibleFilterError(f"{variable} names the unknown caches {', '.join(map(str, unknown))}; allowed are {', '.join(sorted(_BY_NAME))}")
    volumes, env = [], {}
    for name in sorted(dirs):
        host_dir = dirs[name]
        if not isinstance(host_dir, str) or not host_dir.startswith("/") or any(mark in host_dir for mark in _FORBIDDEN):
            raise AnsibleFilterError(f"{variable}['{name}'] is {host_dir!r}; give an absolute host path without ':' ',' or line breaks")
        variable_name, container_dir = _BY_NAME[name]
        volumes.append(f"{host_dir}:{container_dir}")
        env[variable_name] = container_dir
    return dict(volumes=volumes, env=env)


class FilterModule:
    def filters(self):
        return {"vllm_cache_mounts": vllm_cache_mounts}
