# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""vllm_serve's variables: the serve settings they settle, and what the argument specification cannot say of them.

settle() is the one precedence of a serve setting: the role's variable when set (not null), over
vllm_serve_spec_overrides, over the recipe's serve section, over the role's fallbacks; the tensor parallel size,
settled nowhere, is one rank per node. RULES is one table of what is wrong with the variables: vllm_serve's preflight
refuses on it, and validate_inventory.yml judges the same rules on what the inventory sets before any host changes.

The rules read the variables by their full names; a variable the mapping lacks (the inventory did not set it) leaves its
rules unjudged, and a value of the wrong type is the argument specification's to name. A secret (the API key, the extra
variables) is never quoted in a problem. No I/O here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ansible.module_utils.parsing.convert_bool import BOOLEANS, boolean

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_log_settings import docker_log_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._rank_env import LINE_BREAK, extra_env_problems
from ansible_collections.sparkinfer.cluster.plugins.module_utils._recipe import ROLE_OWNED_SPEC_KEYS, ROLE_OWNED_SPEC_VARIABLES, SERVE_ROLE_KEYS, cluster_fit
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import ENV_PROFILES, SPEC_SETTINGS, Setting, describe_expected, is_valid

# What a setting is when nothing sets it.
FALLBACKS: dict[str, Any] = {"pipeline_parallel_size": 1, "gpu_memory_utilization": 0.7, "enforce_eager": False, "env_profile": ""}
# The role's variables that set one serve setting each.
SETTING_VARIABLES = {
    "tensor_parallel_size": "vllm_serve_tensor_parallel_size",
    "pipeline_parallel_size": "vllm_serve_pipeline_parallel_size",
    "max_model_len": "vllm_serve_max_model_len",
    "gpu_memory_utilization": "vllm_serve_gpu_memory_utilization",
    "kv_cache_dtype": "vllm_serve_kv_cache_dtype",
    "enforce_eager": "vllm_serve_enforce_eager",
    "env_profile": "vllm_serve_env_profile",
}
_SPEC = {setting.key: setting for setting in SPEC_SETTINGS}
_URL_PATH = re.compile(r"/[A-Za-z0-9/._~-]*")
_MOUNTED_FILE = re.compile(r"/[A-Za-z0-9/._+-]+")


def recipe_serve(recipe: Mapping) -> Mapping:
    """The recipe's serve section ({} for none or no recipe)."""
    serve = recipe.get("serve") if isinstance(recipe, Mapping) else None
    return serve if isinstance(serve, Mapping) else {}


def _as_typed(key: str, value: Any) -> Any:
    """A role variable given as text (-e name=value) as the argument specification types it (int, float, bool)."""
    setting = _SPEC.get(key)
    if not isinstance(value, str) or setting is None:
        return value
    text = value.strip().lower()
    try:
        if setting.kind == "int" and re.fullmatch(r"-?[0-9]+", text):
            return int(text)
        if setting.kind == "fraction":
            return float(text)
    except ValueError:
        return value
    if setting.kind == "bool" and text in BOOLEANS:
        return boolean(text)
    return value


def settle(recipe: Mapping, variables: Mapping) -> tuple[dict[str, Any], dict[str, str]]:
    """The serve settings and, for each, where it came from (a variable's name, the recipe, the role's fallback).

    recipe is vllm_recipe's result ({} for none); variables the role's, by their full names."""
    settings: dict[str, Any] = dict(FALLBACKS)
    sources = dict.fromkeys(FALLBACKS, "the role's fallback")
    layers: list[tuple[Mapping, str]] = [(recipe_serve(recipe), f"recipe {recipe.get('name', '')}".strip())]
    overrides = variables.get("vllm_serve_spec_overrides")
    layers.append((overrides if isinstance(overrides, Mapping) else {}, "vllm_serve_spec_overrides"))
    given = {key: _as_typed(key, variables[name]) for key, name in SETTING_VARIABLES.items() if variables.get(name) is not None}
    layers.append((given, ""))
    for layer, source in layers:
        for key, value in layer.items():
            settings[key] = value
            sources[key] = source or SETTING_VARIABLES[key]
    if settings.get("tensor_parallel_size") is None:
        hosts = variables.get("vllm_serve_hosts")
        settings["tensor_parallel_size"] = len(hosts) if isinstance(hosts, list) else None
        sources["tensor_parallel_size"] = "one rank per node of vllm_serve_hosts"
    return settings, sources


@dataclass(frozen=True)
class Seen:
    """What a rule judges: the node, its variables, the recipe, and the settings settled from them with their sources."""

    node: str
    variables: Mapping
    recipe: Mapping
    settings: Mapping
    sources: Mapping


def _said(source: str, key: str, value: Any) -> str:
    """How a problem names a setting: by the variable that set it, or by where in a mapping it stands."""
    if source in SETTING_VARIABLES.values():
        return f"{source} is {value!r}"
    return f"{key} is {value!r} (from {source})"


def _spec_overrides(seen: Seen) -> Iterator[str]:
    overrides = seen.variables.get("vllm_serve_spec_overrides")
    for key in overrides if isinstance(overrides, Mapping) else {}:
        if key in ROLE_OWNED_SPEC_VARIABLES:
            yield f"vllm_serve_spec_overrides sets {key}, which the role sets from {ROLE_OWNED_SPEC_VARIABLES[key]}: set that variable instead."
        elif key not in _SPEC and key not in SERVE_ROLE_KEYS:
            close = difflib.get_close_matches(str(key), [*_SPEC, *SERVE_ROLE_KEYS], n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            yield f"vllm_serve_spec_overrides has {key!r}, which is no serve setting{hint}; the settings are {', '.join(_SPEC)}."


_TYPE_OF_KIND: dict[str, type | tuple[type, ...]] = {
    "bool": bool,
    "int": int,
    "port": int,
    "fraction": (int, float),
    "text": str,
    "choice": str,
    "list": list,
    "method": Mapping,
}


def _of_its_kind(setting: Setting, value: Any) -> bool:
    """Whether a value is of the setting's type, whatever its range: a role variable of another type is its argument
    specification's to name."""
    if isinstance(value, bool):
        return setting.kind == "bool"
    return isinstance(value, _TYPE_OF_KIND.get(setting.kind, object))


def _setting_values(seen: Seen) -> Iterator[str]:
    for key, value in seen.settings.items():
        setting: Setting | None = _SPEC.get(key)
        if setting is None or key in ROLE_OWNED_SPEC_KEYS or value is None or is_valid(setting, value):
            continue
        if seen.sources[key] in SETTING_VARIABLES.values() and not _of_its_kind(setting, value):
            continue
        flag = f" ({setting.flag})" if setting.flag else ""
        yield f"{_said(seen.sources[key], key, value)}: {key}{flag} must be {describe_expected(setting)}."


def _sizes(settings: Mapping) -> tuple[int, int, int] | None:
    sizes = tuple(settings.get(key, 1) for key in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"))
    return sizes if all(isinstance(size, int) and not isinstance(size, bool) and size >= 1 for size in sizes) else None


def _parallel_layout(seen: Seen) -> Iterator[str]:
    hosts, per_node, sizes = seen.variables.get("vllm_serve_hosts"), seen.variables.get("vllm_serve_gpus_per_node", 1), _sizes(seen.settings)
    if not isinstance(hosts, list) or not hosts or not isinstance(per_node, int) or sizes is None:
        return
    tensor, pipeline, data = sizes
    if tensor * pipeline * data == len(hosts) * per_node:
        return
    user_set = ("vllm_serve_spec_overrides", *SETTING_VARIABLES.values())
    recipes_layout = not any(seen.sources[key] in user_set for key in ("tensor_parallel_size", "pipeline_parallel_size"))
    if recipes_layout and per_node == 1 and "nodes" in seen.recipe:
        # The recipe's layout on the wrong number of Sparks: its fit says why (the memory plan) and what to do.
        yield cluster_fit(seen.recipe, [str(host) for host in hosts])["message"]
    else:
        yield (
            f"the tensor x pipeline x data parallel size is {tensor} x {pipeline} x {data} = {tensor * pipeline * data} "
            f"(tensor_parallel_size from {seen.sources['tensor_parallel_size']}, pipeline_parallel_size from {seen.sources['pipeline_parallel_size']}), "
            f"but vllm_serve_hosts has {len(hosts)} node{'s' if len(hosts) > 1 else ''} of {per_node} GPU{'s' if per_node > 1 else ''} "
            "(vllm_serve_gpus_per_node): vLLM places one rank on each GPU. Set the sizes to multiply to the GPUs, or the hosts."
        )


def _env_profile(seen: Seen) -> Iterator[str]:
    profile = seen.settings.get("env_profile")
    if profile not in ("", None, *ENV_PROFILES):
        yield f"{_said(seen.sources['env_profile'], 'env_profile', profile)}: give one of {', '.join(ENV_PROFILES)}, or null for vLLM's command line."


def _head_in_hosts(seen: Seen) -> Iterator[str]:
    head, hosts = seen.variables.get("vllm_serve_head_host"), seen.variables.get("vllm_serve_hosts")
    if isinstance(head, str) and isinstance(hosts, list) and head not in hosts:
        yield f"vllm_serve_head_host is {head}, which is not in vllm_serve_hosts ({', '.join(map(str, hosts))})."


def _docker_log(seen: Seen) -> Iterator[str]:
    return docker_log_problems("vllm_serve_", seen.variables)


def _api_guard(seen: Seen) -> Iterator[str]:
    if seen.variables.get("vllm_serve_api_guard_enabled") is True and seen.settings.get("env_profile"):
        yield (
            f"vllm_serve_api_guard_enabled (the API key on every route) needs vLLM's command line for its --middleware, and the env "
            f"profile {seen.settings['env_profile']} (from {seen.sources['env_profile']}) configures the image by its environment: set "
            "vllm_serve_api_guard_enabled to false to serve that image with vLLM's own guard, which covers /v1, /v2, /inference and /cohere only."
        )
    paths = seen.variables.get("vllm_serve_api_open_paths")
    wrong = [path for path in paths if not (isinstance(path, str) and _URL_PATH.fullmatch(path))] if isinstance(paths, list) else []
    if wrong:
        yield f"vllm_serve_api_open_paths holds {', '.join(map(repr, wrong))}: give absolute URL paths of letters, digits and /._~- only, such as /health."


def _tls(seen: Seen) -> Iterator[str]:
    certfile, keyfile, ca_file = (seen.variables.get(f"vllm_serve_tls_{name}") for name in ("certfile", "keyfile", "ca_file"))
    if isinstance(certfile, str) and isinstance(keyfile, str) and bool(certfile) != bool(keyfile):
        yield "set both vllm_serve_tls_certfile and vllm_serve_tls_keyfile to serve HTTPS, or neither for HTTP."
    if isinstance(ca_file, str) and ca_file and certfile == "":
        yield "vllm_serve_tls_ca_file is set but vllm_serve_tls_certfile is not: the CA file only verifies the API's TLS certificate."
    wrong = [path for path in (certfile, keyfile, ca_file) if isinstance(path, str) and path and not _MOUNTED_FILE.fullmatch(path)]
    if wrong:
        yield f"the TLS files must be absolute paths of letters, digits and /._+- (they are mounted into the container): {', '.join(map(repr, wrong))}."


def _one_line(seen: Seen) -> Iterator[str]:
    """What reaches a rank's environment file, one NAME=value a line, holds no line break (named, never quoted)."""
    for name in ("vllm_serve_api_key", "vllm_serve_ray_address"):
        if isinstance(seen.variables.get(name), str) and LINE_BREAK.search(seen.variables[name]):
            yield f"{name} has a line break, which would add variables to each rank's environment file."
    if "vllm_serve_extra_env" in seen.variables:
        yield from (f"{problem}." for problem in extra_env_problems(seen.variables["vllm_serve_extra_env"]))


Rule = Callable[[Seen], Iterator[str]]
RULES: tuple[Rule, ...] = (_spec_overrides, _setting_values, _parallel_layout, _env_profile, _head_in_hosts, _docker_log, _api_guard, _tls, _one_line)


def setting_problems(node: str, variables: Mapping, recipe: Mapping) -> list[str]:
    """One sentence per problem of vllm_serve's variables on a node (with the recipe they settle over), in the table's order."""
    settings, sources = settle(recipe, variables)
    seen = Seen(node, variables, recipe, settings, sources)
    return [problem for rule in RULES for problem in rule(seen)]
