# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A serving recipe: one model on a number of DGX Sparks, as data, checked before anything uses it.

A recipe (``recipes/<name>.yml`` in the collection) says:

- ``model``: the model's id (its Hugging Face repository), whose last part names its directory on the nodes;
- ``image``: the image to serve it with (``name``, as name:tag), ``min_vllm_version``, the first vLLM release with the
  model's class, and optionally ``digest``, the registry digest of the build it was tested with (vllm_image's gate then
  refuses any other build behind the tag);
- ``nodes``: how many Sparks it is served on (tensor x pipeline parallel size: one GB10 each);
- ``serve``: the serve spec (keys of the vllm_serve_argv spec, plus ``env_profile`` and ``extra_env``);
- ``expect``: what vLLM's log must then show (keys of vllm_wait's expect: architecture, quantization ...);
- ``weights_bytes``: the weights' size, for the memory plan before the model is on the nodes;
- ``sources``: where each choice comes from, by its dotted path (``serve.kv_cache_dtype``) or a parent
  of it (``serve`` covers every serve setting without a source of its own); ``assembled`` says which choices no one
  source ran together (settings of one source paired with another's image) and what the sources ran that the recipe
  leaves out.

No I/O here: the filter reads the files.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from ansible_collections.sparkinfer.cluster.plugins.module_utils._memory_plan import MemoryPlanError, memory_plan_message, plan_memory
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import DIGEST_PATTERN, RELEASE_PATTERN
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_serve_spec import ENV_PROFILES, ServeSpecError, validate_spec
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_wait import EXPECTABLE

RECIPE_KEYS = ("name", "description", "model", "image", "nodes", "weights_bytes", "serve", "expect", "sources")
IMAGE_KEYS = ("name", "min_vllm_version", "digest")
# Serve settings the role decides, not the recipe: where the model lies, where the API listens, its key and TLS, the
# executor; each with the vllm_serve variable that sets it.
ROLE_OWNED_SPEC_VARIABLES = {
    "model": "vllm_serve_model",
    "host": "vllm_serve_api_host",
    "port": "vllm_serve_port",
    "ssl_certfile": "vllm_serve_tls_certfile",
    "ssl_keyfile": "vllm_serve_tls_keyfile",
    "api_key": "vllm_serve_api_key",
    "distributed_executor_backend": "vllm_serve_executor",
}
ROLE_OWNED_SPEC_KEYS = tuple(ROLE_OWNED_SPEC_VARIABLES)
# Settings of a recipe's serve section that are not vLLM flags: how the image's entrypoint reads the spec, and its environment.
SERVE_ROLE_KEYS = ("env_profile", "extra_env")
NAME_PATTERN = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
# Keys of sources that cite no one choice: what is assembled from several sources.
SOURCE_NOTES = ("assembled",)
# [registry[:port]/]repository[:tag], lower-case repository as Docker requires. No @digest: an image loaded on another
# node has no registry digest to be found by, so a pin is image.digest, which the gate checks on the source node.
IMAGE_PATTERN = re.compile(r"^([a-z0-9.-]+(:[0-9]+)?/)?[a-z0-9._/-]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?$")
MODEL_PATTERN = re.compile(r"^[A-Za-z0-9._-]+(/[A-Za-z0-9._-]+)?$")
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# A DGX Spark at best, all of its memory free: MemTotal 127601452 KiB (121.69 GiB; SPARK_FACTS §2.1). A recipe that does not fit
# nodes like this fits no real Spark either.
GB10_MEM_TOTAL_KIB = 127601452


class RecipeError(ValueError):
    """A recipe that cannot be used as it is (named in the message)."""


def _is_int(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _mapping(where: str, value: Any, allowed: Sequence[str] | None = None) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise RecipeError(f"{where} must be a dictionary, got {type(value).__name__}")
    unknown = sorted(str(key) for key in value if allowed is not None and key not in allowed)
    if unknown:
        raise RecipeError(f"{where} has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(allowed or ())}")
    return value


def _text(where: str, value: Any, pattern: re.Pattern[str] | None = None, wanted: str = "") -> str:
    if not isinstance(value, str) or not value.strip() or (pattern is not None and not pattern.match(value)):
        raise RecipeError(f"{where} must be {wanted or 'a non-empty string'}, got {value!r}")
    return value


def _check_serve(name: str, serve: Mapping[str, Any], nodes: int) -> None:
    where = f"recipe {name}: serve"
    owned = sorted(key for key in serve if key in ROLE_OWNED_SPEC_KEYS)
    if owned:
        raise RecipeError(f"{where} sets {', '.join(owned)}, which the vllm_serve role sets (its own variables); leave them out")
    spec = {key: value for key, value in serve.items() if key not in SERVE_ROLE_KEYS}
    try:
        checked = validate_spec({"model": "model", **spec})
    except ServeSpecError as exc:
        raise RecipeError(f"recipe {name}: {exc}") from exc
    if "tensor_parallel_size" not in checked:
        raise RecipeError(f"{where}.tensor_parallel_size is required (one GB10 per node: tensor x pipeline parallel size = nodes)")
    world = checked["tensor_parallel_size"] * checked.get("pipeline_parallel_size", 1) * checked.get("data_parallel_size", 1)
    if world != nodes:
        raise RecipeError(f"{where}: tensor x pipeline x data parallel size is {world}, but the recipe is for {nodes} nodes of one GB10 each")
    profile = serve.get("env_profile")
    if profile is not None and profile not in ENV_PROFILES:
        raise RecipeError(f"{where}.env_profile must be one of {', '.join(ENV_PROFILES)}, got {profile!r}")
    env = _mapping(f"{where}.extra_env", serve.get("extra_env", {}))
    for key, value in env.items():
        if not isinstance(key, str) or not ENV_NAME_PATTERN.match(key) or not isinstance(value, str) or any(c in value for c in "\r\n\x00"):
            raise RecipeError(f"{where}.extra_env must map variable names to one-line strings, got {key!r}: {value!r}")


def _check_expect(name: str, expect: Mapping[str, Any]) -> None:
    _mapping(f"recipe {name}: expect", expect, EXPECTABLE)
    for required in ("architecture", "quantization"):
        if required not in expect:
            raise RecipeError(f"recipe {name}: expect.{required} is required (what vLLM's log must show; quantization null for none)")
    for key, value in expect.items():
        if value is not None and not isinstance(value, (str, int)):
            raise RecipeError(f"recipe {name}: expect.{key} must be a string, an integer or null, got {value!r}")


def _choices(recipe: Mapping[str, Any]) -> list[str]:
    """The dotted paths of every choice a recipe makes, each of which needs a source."""
    paths = ["model", "nodes", "weights_bytes"]
    paths += [f"image.{key}" for key in recipe["image"]]
    paths += [f"serve.{key}" for key in recipe["serve"]]
    paths += [f"expect.{key}" for key in recipe["expect"]]
    return paths


def _check_sources(name: str, recipe: Mapping[str, Any]) -> None:
    sources = _mapping(f"recipe {name}: sources", recipe["sources"])
    for path, source in sources.items():
        _text(f"recipe {name}: sources.{path}", source)
    choices = _choices(recipe)
    missing = [path for path in choices if not any(path == key or path.startswith(f"{key}.") for key in sources)]
    if missing:
        raise RecipeError(f"recipe {name}: no source for {', '.join(missing)} (sources maps each choice, or its section, to where it comes from)")
    stale = sorted(key for key in sources if key not in SOURCE_NOTES and not any(path == key or path.startswith(f"{key}.") for path in choices))
    if stale:
        raise RecipeError(f"recipe {name}: sources names {', '.join(stale)}, which the recipe does not set")


def check_recipe(name: str, recipe: Any) -> dict[str, Any]:
    """The recipe, checked; raises RecipeError naming the recipe and what is wrong."""
    recipe = _mapping(f"recipe {name}", recipe, RECIPE_KEYS)
    missing = [key for key in RECIPE_KEYS if key not in recipe]
    if missing:
        raise RecipeError(f"recipe {name} lacks {', '.join(missing)}")
    if recipe["name"] != name:
        raise RecipeError(f"recipe {name} says its name is {recipe['name']!r}; the file's name and the recipe's must agree")
    _text(f"recipe {name}: name", name, NAME_PATTERN, "lower-case letters, digits, . and -")
    _text(f"recipe {name}: description", recipe["description"])
    _text(f"recipe {name}: model", recipe["model"], MODEL_PATTERN, "a model id such as Qwen/Qwen3.5-122B-A10B-FP8")
    image = _mapping(f"recipe {name}: image", recipe["image"], IMAGE_KEYS)
    _text(f"recipe {name}: image.name", image.get("name"), IMAGE_PATTERN, "an image reference (name:tag; a pin is image.digest)")
    if "digest" in image:
        _text(f"recipe {name}: image.digest", image["digest"], DIGEST_PATTERN, "a registry digest, sha256: and 64 hexadecimal digits")
    _text(f"recipe {name}: image.min_vllm_version", image.get("min_vllm_version"), RELEASE_PATTERN, "a release such as 0.17.0")
    if not _is_int(recipe["nodes"], 1):
        raise RecipeError(f"recipe {name}: nodes must be an integer >= 1, got {recipe['nodes']!r}")
    if not _is_int(recipe["weights_bytes"], 1):
        raise RecipeError(f"recipe {name}: weights_bytes must be an integer >= 1, got {recipe['weights_bytes']!r}")
    _check_serve(name, _mapping(f"recipe {name}: serve", recipe["serve"]), recipe["nodes"])
    _check_expect(name, recipe["expect"])
    _check_sources(name, recipe)
    return dict(recipe)


def cluster_fit(recipe: Mapping[str, Any], hosts: Sequence[str]) -> dict[str, Any]:
    """Whether a cluster of these hosts can serve the recipe: ``fits`` and a ``message`` with the fix.

    The recipe's layout needs exactly its number of nodes. On fewer, the memory plan of its weights over
    the cluster's nodes, each a Spark with all of its memory free, says why it cannot fit and how many
    Sparks it needs; a recipe that fails that plan fails every real Spark.
    """
    name, wanted, count = recipe["name"], recipe["nodes"], len(hosts)
    if count == wanted:
        return {"fits": True, "message": f"recipe {name} is for {wanted} node{'s' if wanted > 1 else ''}: the cluster has {count}."}
    sparks = f"{wanted} Spark{'s' if wanted > 1 else ''}"
    where = f"recipe {name} is served on {sparks} (tensor x pipeline parallel size {wanted}); the cluster has {count} ({', '.join(hosts)})"
    if count > wanted:
        return {"fits": False, "message": f"{where}: set sparkinfer_cluster_hosts to {wanted} of them, or group them into clusters of {wanted}."}
    nodes = [{"name": host, "mem_available_kib": GB10_MEM_TOTAL_KIB, "mem_total_kib": GB10_MEM_TOTAL_KIB} for host in hosts]
    utilization = recipe["serve"].get("gpu_memory_utilization", 0.7)
    try:
        plan = plan_memory(recipe["weights_bytes"], nodes, utilization, tensor_parallel_size=count, pipeline_parallel_size=1) if nodes else None
    except MemoryPlanError as exc:
        raise RecipeError(f"recipe {name}: {exc}") from exc
    memory = f" Even with all of a Spark's memory free: {memory_plan_message(plan)}" if plan is not None and not plan["fits"] else ""
    return {"fits": False, "message": f"{where}.{memory} Serve it on {wanted} Sparks, or choose a recipe for {count}."}
