# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A declarative vLLM serve spec turned into the argv of one rank, or into the environment of an image.

Two forms of one spec, both driven by the tables below (SPEC_SETTINGS, RANK_SETTINGS, ENV_PROFILES);
the code only knows kinds of values (text, integer, fraction, switch, list), never a particular key:

- argv: ``vllm serve MODEL --flag value ...`` for one rank. With the mp executor across nodes every
  rank gets the same serve flags, and only ``--node-rank`` and ``--headless`` differ (SPARK_FACTS
  §2.5: different flags mean different VllmConfigs, which deadlock tensor parallelism).
- env: the variables an entrypoint image reads in place of flags (profiles below, each citing the
  entrypoint it was read from). Stock vLLM reads one of them itself: VLLM_API_KEY.

The API key never goes in argv. On the command line it would show in ``ps`` and
``/proc/<pid>/cmdline`` (readable by every local user) and in ``docker inspect`` (Args, Cmd). In
the environment it shows in ``/proc/<pid>/environ`` only to its owner and root, but still in
``docker inspect`` (Config.Env) to whoever can reach the Docker socket (root-equivalent anyway). The
environment is the smaller exposure; the role must still mark the task ``no_log``. So extra_args
may not carry ``--api-key`` in any spelling vLLM's parser accepts (``--api_key``, ``--api-key=...``,
the prefix ``--api-k``), nor any other flag a key sets; and an env value may not hold a line break,
which would add variables to the environment file the role writes.

No I/O here.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Mapping

from ansible_collections.sparkinfer.cluster.plugins.module_utils._rank_env import LINE_BREAK

# vLLM ParallelConfig.master_port default, the rendezvous port of the mp executor (SPARK_FACTS §2.4).
DEFAULT_MASTER_PORT = 29501
EXECUTORS = ("ray", "mp")


class ServeSpecError(ValueError):
    """A serve spec, rank context or env profile that cannot be turned into a command line."""


@dataclass(frozen=True)
class Setting:
    """One row of the tables: a spec key, its kind of value, how the command line carries it, its variables.

    cli: ``positional`` (right after ``vllm serve``), ``option`` (flag and value), ``switch`` (flag
    alone when true, nothing when false), ``append`` (the items as they are), ``never`` (not on the
    command line at all). env: profile name -> the variable that image reads for this key.
    """

    key: str
    kind: str
    cli: str
    flag: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    choices: tuple[str, ...] = ()
    minimum: int = 1
    aliases: tuple[str, ...] = ()
    description: str = ""


# The serve spec, in argv order. Env columns:
# - vllm: vLLM itself. `vllm serve` reads VLLM_API_KEY when --api-key is not given (vllm
#   entrypoints/openai/api_server.py: `args.api_key or envs.VLLM_API_KEY`); no other serve setting has a
#   variable (an unknown VLLM_* is only warned about, SPARK_FACTS §2.5).
# - sagemaker: the AWS Deep Learning Container for vLLM, SageMaker flavour: its entrypoint turns every
#   SM_VLLM_<NAME>=<value> into --<name> <value> (lower case, _ -> -; an empty value gives the bare flag)
#   after a leading --port 8080 (aws/deep-learning-containers vllm/build_artifacts/sagemaker_entrypoint.sh,
#   commit cb035a10da530bd891c3eabcdb9d4cb204b9fd7c). It runs `python3 -m vllm.entrypoints.openai.api_server`,
#   which reads VLLM_API_KEY too, so the key stays out of argv there as well (SM_VLLM_API_KEY would not).
# - lisa: awslabs/LISA, lib/serve/ecs-model/vllm/src/entrypoint.sh (commit 6a8fb12ca3f2daae643ea29161981095dc8494e5).
#   Only the variables that script turns into flags are listed: its header also names VLLM_ENFORCE_EAGER,
#   VLLM_KV_CACHE_DTYPE, VLLM_PIPELINE_PARALLEL_SIZE ... as "read natively by vLLM", which vLLM does not do.
#   It serves LOCAL_MODEL_PATH as MODEL_NAME on a fixed port 8080, after copying the model from S3
#   (S3_BUCKET_MODELS, S3_MOUNT_POINT, THREADS: not part of a serve spec, the caller adds them).
SPEC_SETTINGS: tuple[Setting, ...] = (
    Setting("model", "text", "positional", env={"sagemaker": "SM_VLLM_MODEL", "lisa": "LOCAL_MODEL_PATH"}, description="the model directory"),
    Setting(
        "served_model_name",
        "text",
        "option",
        "--served-model-name",
        env={"sagemaker": "SM_VLLM_SERVED_MODEL_NAME", "lisa": "MODEL_NAME"},
    ),
    Setting(
        "tensor_parallel_size",
        "int",
        "option",
        "--tensor-parallel-size",
        env={"sagemaker": "SM_VLLM_TENSOR_PARALLEL_SIZE", "lisa": "VLLM_TENSOR_PARALLEL_SIZE"},
        aliases=("-tp",),
    ),
    Setting("pipeline_parallel_size", "int", "option", "--pipeline-parallel-size", env={"sagemaker": "SM_VLLM_PIPELINE_PARALLEL_SIZE"}, aliases=("-pp",)),
    Setting("data_parallel_size", "int", "option", "--data-parallel-size", env={"sagemaker": "SM_VLLM_DATA_PARALLEL_SIZE"}, aliases=("-dp",)),
    Setting(
        "distributed_executor_backend",
        "choice",
        "option",
        "--distributed-executor-backend",
        env={"sagemaker": "SM_VLLM_DISTRIBUTED_EXECUTOR_BACKEND"},
        choices=EXECUTORS,
    ),
    Setting("max_model_len", "int", "option", "--max-model-len", env={"sagemaker": "SM_VLLM_MAX_MODEL_LEN", "lisa": "VLLM_MAX_MODEL_LEN"}),
    Setting(
        "gpu_memory_utilization",
        "fraction",
        "option",
        "--gpu-memory-utilization",
        env={"sagemaker": "SM_VLLM_GPU_MEMORY_UTILIZATION", "lisa": "VLLM_GPU_MEMORY_UTILIZATION"},
    ),
    Setting("kv_cache_dtype", "text", "option", "--kv-cache-dtype", env={"sagemaker": "SM_VLLM_KV_CACHE_DTYPE"}),
    Setting("max_num_seqs", "int", "option", "--max-num-seqs", env={"sagemaker": "SM_VLLM_MAX_NUM_SEQS", "lisa": "VLLM_MAX_NUM_SEQS"}),
    Setting("enforce_eager", "bool", "switch", "--enforce-eager", env={"sagemaker": "SM_VLLM_ENFORCE_EAGER"}),
    Setting("host", "text", "option", "--host", env={"sagemaker": "SM_VLLM_HOST"}),
    Setting("port", "port", "option", "--port", env={"sagemaker": "SM_VLLM_PORT"}),
    # TLS for the API (uvicorn's, through vLLM's --ssl-* options): paths as the container sees them.
    Setting("ssl_certfile", "text", "option", "--ssl-certfile", env={"sagemaker": "SM_VLLM_SSL_CERTFILE"}),
    Setting("ssl_keyfile", "text", "option", "--ssl-keyfile", env={"sagemaker": "SM_VLLM_SSL_KEYFILE"}),
    Setting(
        "api_key",
        "text",
        "never",
        env={"vllm": "VLLM_API_KEY", "sagemaker": "VLLM_API_KEY", "lisa": "VLLM_API_KEY"},
        aliases=("--api-key",),
        description="given in the environment only",
    ),
    Setting("trust_remote_code", "bool", "switch", "--trust-remote-code", env={"sagemaker": "SM_VLLM_TRUST_REMOTE_CODE", "lisa": "VLLM_TRUST_REMOTE_CODE"}),
    Setting("load_format", "text", "option", "--load-format", env={"sagemaker": "SM_VLLM_LOAD_FORMAT"}),
    Setting(
        "attention_backend",
        "text",
        "option",
        "--attention-backend",
        env={"sagemaker": "SM_VLLM_ATTENTION_BACKEND", "lisa": "VLLM_ATTENTION_BACKEND"},
    ),
    Setting("moe_backend", "text", "option", "--moe-backend", env={"sagemaker": "SM_VLLM_MOE_BACKEND"}),
    # Speculative decoding (MTP: the main decode-speed lever on a Spark), as vLLM's --speculative-config JSON.
    Setting(
        "speculative_config",
        "method",
        "option",
        "--speculative-config",
        env={"sagemaker": "SM_VLLM_SPECULATIVE_CONFIG"},
        description="speculative decoding, such as {method: mtp}",
    ),
    Setting("enable_expert_parallel", "bool", "switch", "--enable-expert-parallel", env={"sagemaker": "SM_VLLM_ENABLE_EXPERT_PARALLEL"}),
    Setting("language_model_only", "bool", "switch", "--language-model-only", env={"sagemaker": "SM_VLLM_LANGUAGE_MODEL_ONLY"}),
    Setting("extra_args", "list", "append", description="more vllm serve arguments, identical on every rank"),
)

# The rank context, emitted after the serve flags (so two ranks' argv differ in a tail only). No cited
# image reads these from its environment (the SageMaker entrypoint's api_server has no --headless,
# that is a `vllm serve` option), so the env form serves one node unless a custom profile maps them.
RANK_SETTINGS: tuple[Setting, ...] = (
    Setting("nnodes", "int", "option", "--nnodes"),
    Setting("node_rank", "int", "option", "--node-rank", minimum=0),
    Setting("master_addr", "text", "option", "--master-addr"),
    Setting("master_port", "port", "option", "--master-port"),
    Setting("headless", "bool", "switch", "--headless"),
    Setting("gpus_per_node", "int", "never", description="checked against the parallel sizes, never emitted"),
)


@dataclass(frozen=True)
class EnvProfile:
    """How one family of images reads its settings from the environment.

    true_value / false_value: what a switch becomes (None: the variable is left out). complete: the
    profile must express every setting the spec makes (an image configured by env alone); when false
    (stock vLLM) the settings without a variable belong in argv.
    """

    name: str
    source: str
    true_value: str | None
    false_value: str | None
    complete: bool


ENV_PROFILES: dict[str, EnvProfile] = {
    "vllm": EnvProfile("vllm", "vLLM itself (vllm/entrypoints/openai/api_server.py reads VLLM_API_KEY)", "true", None, complete=False),
    "sagemaker": EnvProfile(
        "sagemaker",
        "aws/deep-learning-containers vllm/build_artifacts/sagemaker_entrypoint.sh @ cb035a10da530bd891c3eabcdb9d4cb204b9fd7c",
        "",
        None,
        complete=True,
    ),
    "lisa": EnvProfile(
        "lisa", "awslabs/LISA lib/serve/ecs-model/vllm/src/entrypoint.sh @ 6a8fb12ca3f2daae643ea29161981095dc8494e5", "true", None, complete=True
    ),
}

_SPEC = {setting.key: setting for setting in SPEC_SETTINGS}
_RANK = {setting.key: setting for setting in RANK_SETTINGS}
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_KIND_WORDS = {
    "text": "a non-empty string",
    "int": "an integer >= {minimum}",
    "fraction": "a number in (0, 1]",
    "bool": "true or false",
    "choice": "one of {choices}",
    "port": "a port number 1-65535",
    "list": "a list of strings or numbers",
    "method": "a mapping with a non-empty string method, such as {{method: mtp, num_speculative_tokens: 3}}",
}


def describe_expected(setting: Setting) -> str:
    return _KIND_WORDS[setting.kind].format(minimum=setting.minimum, choices=", ".join(setting.choices))


def _type_name(value: Any) -> str:
    """The builtin type behind a value (Ansible hands filters tagged subclasses of str, int, dict ...)."""
    for base in type(value).__mro__:
        if base in (bool, int, float, str, list, tuple, dict, type(None)):
            return base.__name__
    return type(value).__name__


def _shown(value: Any) -> str:
    return f"{_type_name(value)} {value!r}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_valid(setting: Setting, value: Any) -> bool:
    kind = setting.kind
    if kind == "text":
        return isinstance(value, str) and value.strip() != ""
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool) and value >= setting.minimum
    if kind == "fraction":
        return _is_number(value) and 0 < value <= 1
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "choice":
        return value in setting.choices
    if kind == "port":
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535
    if kind == "method":
        return isinstance(value, Mapping) and all(isinstance(name, str) for name in value) and isinstance(value.get("method"), str) and value["method"] != ""
    return isinstance(value, (list, tuple)) and all(isinstance(item, str) or _is_number(item) for item in value)


def _check(where: str, settings: Mapping[str, Setting], given: Any) -> dict[str, Any]:
    """Type-check a mapping against a table; None values count as not set."""
    if not isinstance(given, Mapping):
        raise ServeSpecError(f"{where} must be a dictionary, got {_type_name(given)}")
    checked = {}
    for key, value in given.items():
        setting = settings.get(key) if isinstance(key, str) else None
        if setting is None:
            close = difflib.get_close_matches(str(key), list(settings), n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ServeSpecError(f"{where}: unknown key {key!r}{hint}; allowed keys: {', '.join(settings)}")
        if value is None:
            continue
        if not is_valid(setting, value):
            raise ServeSpecError(f"{where}: {key} must be {describe_expected(setting)}, got {_shown(value)}")
        # argparse reads an argument that starts with - as an option: a model named --help prints the help and
        # exits 0, a served name -x fails as "expected one argument". (api_key never reaches the command line.)
        if setting.kind == "text" and setting.cli in ("positional", "option") and value.startswith("-"):
            raise ServeSpecError(f"{where}: {key} must not start with '-' (vllm serve would read it as an option), got {value!r}")
        checked[key] = list(value) if setting.kind == "list" else dict(value) if setting.kind == "method" else value
    return checked


def _managed_flags() -> dict[str, str]:
    flags = {}
    for setting in SPEC_SETTINGS + RANK_SETTINGS:
        for flag in (setting.flag, *setting.aliases):
            if flag:
                flags[flag] = setting.key
    flags["--model"] = "model"
    return flags


_MANAGED_FLAGS = _managed_flags()


def _option_of(item: str) -> str | None:
    """The option an extra_args item names as vLLM's parser reads it, or None for a value.

    vLLM's FlexibleArgumentParser turns _ into - in the name of a long option (``--api_key`` is
    ``--api-key``), and argparse splits ``--flag=value`` (and ``-tp=4``) at the first ``=``.
    """
    if not item.startswith("-") or item in ("-", "--"):
        return None
    return item.split("=", 1)[0].replace("_", "-")


def _managed_by(option: str) -> list[str]:
    """The managed flags an option stands for: itself, or the flags it is a prefix of.

    argparse expands an unambiguous prefix of an option (allow_abbrev, on in vLLM's parser): ``--api-k``
    is ``--api-key``, ``--tensor`` is ``--tensor-parallel-size``. An ambiguous prefix fails vLLM's start
    anyway, so a prefix of any managed flag is refused.
    """
    if option in _MANAGED_FLAGS:
        return [option]
    return [flag for flag in _MANAGED_FLAGS if flag.startswith(option) and (flag.startswith("--") == option.startswith("--"))]


# Options of vllm serve whose value is a secret, with the shortest prefix vLLM 0.32's parser expands to each
# (--hf-token beside --hf-overrides and --hf-config-path, vllm/engine/arg_utils.py) and the variable that carries it
# instead. On the command line a secret shows in ps, /proc/PID/cmdline, docker inspect's Args and vLLM's log of its
# non-default args; vLLM and huggingface_hub read HF_TOKEN from the environment themselves.
_SECRET_OPTIONS = {"--hf-token": ("--hf-t", "HF_TOKEN")}


def _check_no_secret_option(extra: list[Any]) -> None:
    """Refuse an item that would put a secret on the command line; the error names the option, never its value."""
    for item in extra:
        option = _option_of(item) if isinstance(item, str) else None
        for flag, (shortest, variable) in _SECRET_OPTIONS.items():
            if option and option.startswith(shortest) and flag.startswith(option):
                given = item.split("=", 1)[0]
                spelled = f" ({flag} to vLLM's parser)" if given != flag else ""
                raise ServeSpecError(
                    f"serve spec: extra_args holds {given}{spelled}, a secret on the command line, where ps, docker inspect "
                    f"and vLLM's log show it: give it in the environment as {variable} instead (the vllm_serve role: "
                    f"vllm_serve_extra_env, which the support bundle masks)"
                )


def _check_extra_args(extra: list[Any]) -> None:
    """Refuse an item that sets what a spec key or the rank context sets, however it is spelled, or carries a secret.

    The error names the option only, never an ``=value`` (``--api_key=...`` holds the key).
    """
    _check_no_secret_option(extra)
    for item in extra:
        if not isinstance(item, str):
            continue
        option = _option_of(item)
        flags = _managed_by(option) if option else []
        if not flags:
            continue
        given = item.split("=", 1)[0]
        keys = list(dict.fromkeys(_MANAGED_FLAGS[flag] for flag in flags))
        if len(flags) > 1:
            spelled = f" (a prefix of {', '.join(flags)})"
        elif flags[0] != given:
            spelled = f" ({flags[0]} to vLLM's parser)"
        else:
            spelled = ""
        which = f"the spec key {keys[0]} sets; set that key" if len(keys) == 1 else f"the spec keys {', '.join(keys)} set; set those keys"
        raise ServeSpecError(
            f"serve spec: extra_args holds {given}{spelled}, which {which} instead (rank flags come from the rank context, the API key from api_key)"
        )


def _sizes(spec: Mapping[str, Any]) -> tuple[int, int, int]:
    return spec.get("tensor_parallel_size", 1), spec.get("pipeline_parallel_size", 1), spec.get("data_parallel_size", 1)


def validate_spec(spec: Any) -> dict[str, Any]:
    """The spec with its types checked and None values dropped; raises ServeSpecError naming the key."""
    checked = _check("serve spec", _SPEC, spec)
    if "model" not in checked:
        raise ServeSpecError("serve spec: model is required (the model directory, the same path on every node)")
    _check_extra_args(checked.get("extra_args", []))
    return checked


def validate_rank(rank: Any, spec: Mapping[str, Any]) -> dict[str, Any]:
    """The rank context of one node, completed with defaults and checked against the checked spec."""
    checked = _check("rank context", _RANK, rank if rank is not None else {})
    nnodes = checked.setdefault("nnodes", 1)
    node_rank = checked.setdefault("node_rank", 0)
    executor = spec.get("distributed_executor_backend")
    tensor, pipeline, data = _sizes(spec)
    world = tensor * pipeline * data
    if node_rank >= nnodes:
        raise ServeSpecError(f"rank context: node_rank must be in 0..{nnodes - 1} (nnodes {nnodes}), got {node_rank}")
    if "gpus_per_node" in checked and world != nnodes * checked["gpus_per_node"]:
        raise ServeSpecError(
            f"serve spec: tensor_parallel_size x pipeline_parallel_size x data_parallel_size = {tensor} x {pipeline} x {data} = {world} "
            f"must equal nnodes x gpus_per_node = {nnodes} x {checked['gpus_per_node']} = {nnodes * checked['gpus_per_node']}"
        )
    if nnodes == 1:
        if checked.get("headless"):
            raise ServeSpecError("rank context: headless is for follower ranks (node_rank > 0); a single node must serve the API itself")
        return checked
    if executor is None:
        raise ServeSpecError(f"serve spec: distributed_executor_backend must be one of {', '.join(EXECUTORS)} when nnodes is {nnodes}")
    if executor == "ray":
        if node_rank != 0 or checked.get("headless"):
            raise ServeSpecError(
                "rank context: with distributed_executor_backend ray, vllm serve runs on the Ray head only "
                f"(node_rank 0, not headless); got node_rank {node_rank}, headless {checked.get('headless', False)}"
            )
        return checked
    headless = checked.setdefault("headless", node_rank > 0)
    if headless != (node_rank > 0):
        which = "rank 0 serves the API and cannot be headless" if headless else "follower ranks (node_rank > 0) must be headless"
        raise ServeSpecError(f"rank context: headless is {headless} on node_rank {node_rank}: {which}")
    if "master_addr" not in checked:
        raise ServeSpecError("rank context: master_addr (the rank-0 node's fabric address) is required with distributed_executor_backend mp across nodes")
    checked.setdefault("master_port", DEFAULT_MASTER_PORT)
    if data > 1:
        raise ServeSpecError(
            "serve spec: data_parallel_size > 1 with distributed_executor_backend mp across nodes needs per-rank "
            "--data-parallel-* flags, which this builder does not emit; use data_parallel_size 1 or the ray executor"
        )
    if world % nnodes:
        raise ServeSpecError(
            f"serve spec: tensor_parallel_size x pipeline_parallel_size = {world} must be a multiple of nnodes ({nnodes}) "
            "for the mp executor to place the same number of ranks on every node"
        )
    return checked


def _rank_values(rank: Mapping[str, Any], spec: Mapping[str, Any]) -> dict[str, Any]:
    """What the rank context puts on the command line: nothing on one node or with Ray."""
    if rank["nnodes"] == 1 or spec.get("distributed_executor_backend") != "mp":
        return {}
    return {key: rank[key] for key in ("nnodes", "node_rank", "master_addr", "master_port", "headless")}


def _resolved(spec: Any, rank: Any) -> list[tuple[Setting, Any]]:
    checked = validate_spec(spec)
    rank_values = _rank_values(validate_rank(rank, checked), checked)
    rows = [(setting, checked[setting.key]) for setting in SPEC_SETTINGS if setting.key in checked]
    rows += [(setting, rank_values[setting.key]) for setting in RANK_SETTINGS if setting.key in rank_values]
    return rows


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return json.dumps(dict(value), separators=(",", ":"))
    if isinstance(value, float):
        return repr(float(value))
    if isinstance(value, int):
        return str(int(value))
    return str(value)


def _emits(setting: Setting, value: Any) -> bool:
    """Whether the value changes vLLM's behaviour (a false switch and an empty list do not)."""
    return bool(value) if setting.kind in ("bool", "list") else True


def build_argv(spec: Any, rank: Any = None) -> list[str]:
    """``vllm serve MODEL --flag value ...`` for one rank; the API key is never in it."""
    argv = ["vllm", "serve"]
    for setting, value in _resolved(spec, rank):
        if setting.cli == "positional":
            argv.append(_text(value))
        elif setting.cli == "option":
            argv += [str(setting.flag), _text(value)]
        elif setting.cli == "switch" and value:
            argv.append(str(setting.flag))
        elif setting.cli == "append":
            argv += [_text(item) for item in value]
    return argv


def _profile(profile: Any) -> tuple[EnvProfile, Mapping[str, str]]:
    """A named profile from ENV_PROFILES, or a custom one: {variables: {key: VAR}, true_value, false_value, complete}."""
    if isinstance(profile, str):
        if profile not in ENV_PROFILES:
            raise ServeSpecError(f"env profile: unknown profile {profile!r}; known profiles: {', '.join(ENV_PROFILES)} (or a dictionary with variables)")
        return ENV_PROFILES[profile], {setting.key: setting.env[profile] for setting in SPEC_SETTINGS + RANK_SETTINGS if profile in setting.env}
    if not isinstance(profile, Mapping):
        raise ServeSpecError(f"env profile must be a profile name or a dictionary, got {_type_name(profile)}")
    allowed = ("variables", "true_value", "false_value", "complete")
    unknown = [key for key in profile if key not in allowed]
    if unknown:
        raise ServeSpecError(f"env profile: unknown key {unknown[0]!r}; allowed keys: {', '.join(allowed)}")
    variables = profile.get("variables")
    if not isinstance(variables, Mapping) or not variables:
        raise ServeSpecError("env profile: variables must be a non-empty dictionary of spec key -> environment variable name")
    for key, name in variables.items():
        if key not in _SPEC and key not in _RANK:
            raise ServeSpecError(f"env profile: variables names unknown key {key!r}; allowed keys: {', '.join(list(_SPEC) + list(_RANK))}")
        if not isinstance(name, str) or not _ENV_NAME.match(name):
            raise ServeSpecError(f"env profile: variables.{key} must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*), got {_shown(name)}")
    for key in ("true_value", "false_value"):
        if profile.get(key) is not None and not isinstance(profile[key], str):
            raise ServeSpecError(f"env profile: {key} must be a string or null, got {_shown(profile[key])}")
    complete = profile.get("complete", True)
    if not isinstance(complete, bool):
        raise ServeSpecError(f"env profile: complete must be true or false, got {_shown(complete)}")
    custom = EnvProfile("custom", "given by the caller", profile.get("true_value", "true"), profile.get("false_value"), complete)
    return custom, variables


def _check_env_lines(env: Mapping[str, str], keys: Mapping[str, str], profile: str) -> None:
    """Refuse a variable whose name or value would break its line; the value is never shown (it may be the API key)."""
    for name, value in env.items():
        # served_model_name: "x\nLD_PRELOAD=..." would start a variable of its own in the environment file.
        if LINE_BREAK.search(name) or LINE_BREAK.search(value):
            raise ServeSpecError(
                f"env profile {profile}: {name} (spec key {keys[name]}) holds a newline, carriage return or NUL: "
                "in the rank's environment file it would start variables of its own; remove it"
            )


def build_env(spec: Any, profile: Any = "vllm", rank: Any = None) -> dict[str, str]:
    """The variables an image reads for this spec. A complete profile that cannot express a setting raises.

    A value holding a newline, carriage return or NUL raises too: the variables go to an environment file.
    """
    env_profile, variables = _profile(profile)
    env: dict[str, str] = {}
    keys: dict[str, str] = {}
    for setting, value in _resolved(spec, rank):
        name = variables.get(setting.key)
        if name is None:
            # A setting argv cannot carry either (the API key) has nowhere else to go.
            if _emits(setting, value) and (env_profile.complete or setting.cli == "never"):
                raise ServeSpecError(
                    f"env profile {env_profile.name}: no variable for {setting.key}; the image reads "
                    f"{', '.join(f'{name} ({key})' for key, name in variables.items())}: "
                    "leave it unset or use an image that takes argv"
                )
            continue
        keys[name] = setting.key
        if setting.kind == "bool":
            encoded = env_profile.true_value if value else env_profile.false_value
            if encoded is not None:
                env[name] = encoded
        elif setting.kind == "list":
            if value:
                env[name] = " ".join(shlex.quote(_text(item)) for item in value)
        else:
            env[name] = _text(value)
    _check_env_lines(env, keys, env_profile.name)
    return env


def lever_expectations(spec: Any) -> dict[str, Any]:
    """What vLLM's engine config must then say of the loader and the speculative decoding the spec asks for (the gate's
    load_format and speculative_method); nothing of what the spec leaves to vLLM."""
    checked = validate_spec(spec)
    expect: dict[str, Any] = {}
    if "load_format" in checked:
        expect["load_format"] = checked["load_format"]
    if "speculative_config" in checked:
        expect["speculative_method"] = checked["speculative_config"]["method"]
    return expect
