"""vllm_image_info end to end in-process, fed real docker outputs (fixtures/vllm_image/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import PROBE_SCRIPT, parse_image_inspect, probe_cache_name
from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_image_info

from .module_harness import FakeCommands, ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm_image"
DOCKER = "/usr/bin/docker"
TIMEOUT = "/usr/bin/timeout"
IMAGE = "sparkinfer-lab-vllm:latest"
PROBE_NAME = "sparkinfer-vllm-probe-0123456789ab"


def bounded(seconds: int, *argv: str) -> tuple[str, ...]:
    """argv as the module runs it, under timeout(1)."""
    return (TIMEOUT, "--kill-after=10", str(seconds), *argv)


INSPECT = bounded(60, DOCKER, "image", "inspect", IMAGE)
REMOVE_PROBE = bounded(60, DOCKER, "rm", "-f", PROBE_NAME)


def main() -> None:
    """The module, its probe container named PROBE_NAME instead of a random name."""
    vllm_image_info.main(new_probe_name=lambda: PROBE_NAME)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture(name="cache")
def fixture_cache(tmp_path: Path) -> Path:
    """Each test's own probe cache, never the host's."""
    return tmp_path / "vllm-image-probes"


def probe_argv(name: str, seconds: int = 300) -> tuple[str, ...]:
    """The probe of the image of fixture `name`: its own container name, --init, under timeout(1)."""
    image = parse_image_inspect(fixture(f"{name}.inspect.json"))
    run = ("run", "--rm", "--init", "--name", PROBE_NAME, "--network", "none", "--entrypoint", "python3", image["id"], "-c", PROBE_SCRIPT)
    return bounded(seconds, DOCKER, *run, str(seconds), *image["entrypoint"], *image["cmd"])


def docker_answering(name: str) -> FakeCommands:
    return FakeCommands({INSPECT: (0, fixture(f"{name}.inspect.json"), ""), probe_argv(name): (0, fixture(f"{name}.probe.txt"), "")})


def test_an_image_with_the_model_class_and_ray_passes(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    result = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"], "require_ray": True}, commands)
    assert result["changed"] is False
    assert result["missing_architectures"] == []
    image = result["vllm_image"]
    assert (image["present"], image["vllm_version"], image["ray_version"]) == (True, "0.32.0", "2.60.0")
    assert (image["probe_cached"], image["probe_skipped"]) == (False, False)
    assert commands.calls == [INSPECT, probe_argv("vllm-cpu-0.32.0-lab")]


def test_an_image_without_the_model_class_fails_before_anything_starts(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(
            main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"]},
            docker_answering("vllm-cpu-0.32.0-lab"),
        )
    result = failure.value.result
    assert result["msg"].startswith("sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM")
    assert result["missing_architectures"][0]["architecture"] == "SparkinferTinyMoeForCausalLM"


def test_the_ray_executor_needs_ray_in_the_image(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_ray": True}, docker_answering("no-vllm-lab-node"))
    assert "has no working ray (ModuleNotFoundError: No module named 'ray'), which the Ray executor needs" in failure.value.result["msg"]


def test_the_mp_executor_across_nodes_needs_an_image_whose_vllm_has_nnodes(cache):
    passed = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_multinode_mp": True}, docker_answering("vllm-cpu-0.32.0-lab"))
    assert passed["vllm_image"]["vllm_version"] == "0.32.0"
    # The same image's probe answer with vLLM 0.11.0 (NGC 25.11's), the last release without --nnodes.
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    old_answer = fixture("vllm-cpu-0.32.0-lab.probe.txt").replace('"vllm_version": "0.32.0"', '"vllm_version": "0.11.0"')
    assert old_answer != fixture("vllm-cpu-0.32.0-lab.probe.txt")
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab")] = (0, old_answer, "")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache / "old"), "image": IMAGE, "require_multinode_mp": True}, commands)
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest has vLLM 0.11.0, whose `vllm serve` has no --nnodes")


def test_roce_needs_an_image_with_the_rdma_libraries(cache):
    passed = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_rdma": True}, docker_answering("vllm-cpu-0.32.0-lab"))
    assert passed["vllm_image"]["rdma_libraries"]["libibverbs"]
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_rdma": True}, docker_answering("no-vllm-lab-node"))
    assert "lacks libibverbs.so.1 (package libibverbs1) and the mlx5 verbs provider" in failure.value.result["msg"]


def test_an_image_for_another_cpu_fails_before_any_probe(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_architecture": "aarch64"}, commands)
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest is built for amd64 and this host is arm64 (aarch64)")
    assert commands.calls == [INSPECT]


def test_a_cpu_build_fails_the_gpus_compute_capability_and_passes_without_one(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(
            main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "require_architecture": "x86_64", "require_cuda_capability": "12.1"},
            docker_answering("vllm-cpu-0.32.0-lab"),
        )
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest has a CPU build of torch (2.13.0+cpu, no CUDA)")
    result = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_architecture": "x86_64"}, docker_answering("vllm-cpu-0.32.0-lab"))
    assert result["vllm_image"]["cuda_version"] is None


def test_a_compute_capability_that_is_not_major_minor_is_refused(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_cuda_capability": "sm_121"}, FakeCommands({}))
    assert failure.value.result["msg"] == "require_cuda_capability is 'sm_121'; give the GPU's compute capability as MAJOR.MINOR, such as 12.1"


def test_an_env_var_entrypoint_is_reported(cache):
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-envvar-entrypoint"))["vllm_image"]
    assert image["env_configured_entrypoint"] is True
    assert image["entrypoint_env_vars"] == ["VLLM_GPU_MEMORY_UTIL", "VLLM_MAX_MODEL_LEN"]


def test_the_compat_driver_an_image_carries_is_warned_of_over_an_older_host_driver(cache):
    name = "vllm-cpu-0.32.0-ngc-compat-590.48.01"
    # The host driver of NGC vLLM 26.01's banner on a GB10 ("... with kernel driver version 580.126.09").
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        result = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "host_driver_version": "580.126.09"}, docker_answering(name))
    assert result["vllm_image"]["compat_driver_version"] == "590.48.01"
    assert result["vllm_image"]["entrypoint"] == ["/opt/nvidia/nvidia_entrypoint.sh"]
    ((warning,),) = [call.args for call in warn.call_args_list]
    assert warning.startswith(
        f"{IMAGE}: the image carries CUDA's forward-compatibility driver 590.48.01 for the host's 580.126.09: its containers run that libcuda"
    )
    assert "Fix: keep the image's entrypoint" in warning


@pytest.mark.parametrize("host_driver", ["590.48.01", None])
def test_no_compat_warning_for_a_host_of_that_branch_or_an_unknown_host(cache, host_driver):
    args = {"probe_cache_dir": str(cache), "image": IMAGE, "host_driver_version": host_driver}
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        run_module(main, args, docker_answering("vllm-cpu-0.32.0-ngc-compat-590.48.01"))
    assert warn.call_args_list == []


def test_an_image_without_a_compat_driver_says_so(cache):
    args = {"probe_cache_dir": str(cache), "image": IMAGE, "host_driver_version": "580.126.09"}
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        result = run_module(main, args, docker_answering("vllm-cpu-0.32.0-lab"))
    assert result["vllm_image"]["compat_driver_version"] == ""
    assert warn.call_args_list == []


def test_an_absent_image_is_reported_not_failed(cache):
    commands = FakeCommands({INSPECT: (1, "[]", f"Error: No such image: {IMAGE}")})
    result = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"]}, commands)
    assert result["vllm_image"]["present"] is False
    assert result["vllm_image"]["id"] is None


def test_without_the_probe_only_inspect_runs(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "probe": False}, commands)["vllm_image"]
    assert image["entrypoint"] == ["vllm", "serve"]
    assert "vllm_version" not in image
    assert len(commands.calls) == 1


def test_a_docker_failure_is_reported(cache):
    commands = FakeCommands({INSPECT: (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.")})
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert "Cannot connect to the Docker daemon" in failure.value.result["msg"]


def test_a_probe_that_prints_nothing_is_reported(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    probe = probe_argv("vllm-cpu-0.32.0-lab")
    commands.answers[probe] = (127, "", "exec: python3: not found")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert failure.value.result["msg"] == f"cannot probe {IMAGE} (rc=127): the image probe printed no result (does the image have python3?)"
    assert image["id"] in probe


def test_a_probe_answer_is_kept_and_answers_the_next_run_without_a_container(cache):
    first = docker_answering("vllm-cpu-0.32.0-lab")
    probed = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, first)["vllm_image"]
    again = docker_answering("vllm-cpu-0.32.0-lab")
    kept = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"]}, again)
    assert (probed["probe_cached"], kept["vllm_image"]["probe_cached"]) == (False, True)
    assert again.calls == [INSPECT], "the kept answer should have spared the probe container"
    assert {**kept["vllm_image"], "probe_cached": False} == probed
    assert kept["changed"] is False


def test_the_kept_answer_still_refuses_an_image_without_the_model_class(cache):
    run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))
    with pytest.raises(ModuleFail) as failure:
        run_module(
            main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"]},
            docker_answering("vllm-cpu-0.32.0-lab"),
        )
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM")


def test_another_image_is_probed_not_answered_from_the_first_ones_file(cache):
    run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))
    other = docker_answering("vllm-cpu-0.32.0-envvar-entrypoint")
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, other)["vllm_image"]
    assert (image["probe_cached"], image["env_configured_entrypoint"]) == (False, True)
    assert len(list(cache.iterdir())) == 2


def test_an_answer_with_errors_is_not_kept(cache):
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("no-vllm-lab-node"))["vllm_image"]
    assert image["probe_errors"]
    assert not cache.exists() or not list(cache.iterdir())


# --- check mode: no probe container -----------------------------------------------------------------------


def test_check_mode_starts_no_probe_container_and_says_what_it_did_not_check(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    args = {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"], "require_ray": True}
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        result = run_module(main, {**args, "_ansible_check_mode": True}, commands)
    assert commands.calls == [INSPECT], "check mode must not start a probe container"
    image = result["vllm_image"]
    assert (result["changed"], result["missing_architectures"]) == (False, [])
    assert (image["present"], image["probe_skipped"], image["probe_cached"], "vllm_version" in image) == (True, True, False, False)
    assert image["entrypoint"] == ["vllm", "serve"]
    assert "model_architectures and the require_* checks that need them were not made" in warn.call_args.args[0]
    assert not cache.exists()


def test_check_mode_answers_from_a_kept_answer_and_still_gates(cache):
    run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    with pytest.raises(ModuleFail) as failure:
        run_module(
            main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"], "_ansible_check_mode": True},
            commands,
        )
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM")
    assert commands.calls == [INSPECT]


# --- timeouts: the probe is bounded from outside and leaves no container -----------------------------------


def test_a_probe_that_overruns_is_stopped_its_container_removed_and_the_image_named(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    # timeout(1) exits 124 when it stopped the command (no captured output: the probe printed nothing yet).
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab", 3)] = (124, "", "")
    commands.answers[REMOVE_PROBE] = (0, f"{PROBE_NAME}\n", "")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "probe_timeout": 3}, commands)
    message = failure.value.result["msg"]
    assert message.startswith(
        f"`{DOCKER} run --rm --init --name {PROBE_NAME} --network none --entrypoint python3 "
        f"{parse_image_inspect(fixture('vllm-cpu-0.32.0-lab.inspect.json'))['id']} -c <the vLLM probe>` did not finish within 3 s and was stopped: "
        f"the probe of {IMAGE} took longer than probe_timeout (3 s); its container {PROBE_NAME} is removed. "
    )
    assert "raise probe_timeout (vllm_image_probe_timeout in the vllm_image role)" in message
    assert commands.calls == [INSPECT, probe_argv("vllm-cpu-0.32.0-lab", 3), REMOVE_PROBE]
    assert not cache.exists()


def test_a_probe_killed_after_its_grace_time_counts_as_overrun(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab", 3)] = (137, "", "")
    commands.answers[REMOVE_PROBE] = (1, "", f"Error response from daemon: No such container: {PROBE_NAME}")
    # inspect; the probe: 13 s, past its 3 s and timeout(1)'s 10 s of grace; docker rm.
    ticks = iter([0.0, 0.1, 0.1, 13.1, 13.1, 13.2])
    with pytest.raises(ModuleFail) as failure:
        run_module(
            lambda: vllm_image_info.main(clock=lambda: next(ticks), new_probe_name=lambda: PROBE_NAME),
            {"probe_cache_dir": str(cache), "image": IMAGE, "probe_timeout": 3},
            commands,
        )
    assert f"its container {PROBE_NAME} is removed" in failure.value.result["msg"]


def test_a_probe_container_that_cannot_be_removed_is_named_with_the_command_to_remove_it(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab")] = (124, "", "")
    commands.answers[REMOVE_PROBE] = (1, "", "Error response from daemon: synthetic failure for this test")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert (
        f"its container {PROBE_NAME} could not be removed (rc=1: Error response from daemon: synthetic failure for this test): "
        f"remove it with `docker rm -f {PROBE_NAME}`"
    ) in failure.value.result["msg"]


def test_a_probe_container_whose_removal_hangs_is_named_with_the_daemon_fix(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab")] = (124, "", "")
    commands.answers[REMOVE_PROBE] = (124, "", "")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert (
        f"`{DOCKER} rm -f {PROBE_NAME}` did not finish within 60 s and was stopped, so its container may still run: the Docker daemon does not answer"
    ) in failure.value.result["msg"]


def test_an_inspect_that_hangs_is_stopped_and_named(cache):
    commands = FakeCommands({bounded(7, DOCKER, "image", "inspect", IMAGE): (124, "", "")})
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "command_timeout": 7}, commands)
    assert failure.value.result["msg"].startswith(
        f"`{DOCKER} image inspect {IMAGE}` did not finish within 7 s and was stopped: the Docker daemon does not answer"
    )


@pytest.mark.parametrize("option", ["probe_timeout", "command_timeout"])
def test_timeouts_must_be_positive(option, cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, option: 0}, FakeCommands({}))
    assert failure.value.result["msg"] == f"{option} must be a positive number of seconds, not 0"


# --- answers of the wrong shape; secrets in the image's environment ----------------------------------------

# Synthetic: the lab image's real probe answer with one fact given another type (a file damaged or edited by hand).
WRONG_SHAPES = ["SPARKINFER_VLLM_IMAGE_PROBE []\n", 'SPARKINFER_VLLM_IMAGE_PROBE {"errors": {}, "distributions": ["vllm"]}\n']


@pytest.mark.parametrize("kept", WRONG_SHAPES)
def test_a_kept_answer_of_the_wrong_shape_is_probed_again_and_replaced(kept, cache):
    inspect = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    cache.mkdir()
    (cache / probe_cache_name(inspect["id"])).write_text(kept, encoding="utf-8")
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)["vllm_image"]
    assert (image["probe_cached"], image["vllm_version"], len(commands.calls)) == (False, "0.32.0", 2)
    assert (cache / probe_cache_name(inspect["id"])).read_text(encoding="utf-8") == fixture("vllm-cpu-0.32.0-lab.probe.txt")
    again = docker_answering("vllm-cpu-0.32.0-lab")
    assert run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, again)["vllm_image"]["probe_cached"] is True


@pytest.mark.parametrize("answer", WRONG_SHAPES)
def test_a_probe_answer_of_the_wrong_shape_is_a_named_error_and_not_kept(answer, cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    commands.answers[probe_argv("vllm-cpu-0.32.0-lab")] = (0, answer, "")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert failure.value.result["msg"].startswith(f"cannot probe {IMAGE} (rc=0): the image probe's ")
    assert not cache.exists()


def test_a_token_baked_into_the_image_is_not_published(cache):
    token = "hf_synthetic0123456789abcdef"  # synthetic: the lab image's real inspect output with an HF_TOKEN added
    items = json.loads(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    items[0]["Config"]["Env"].append(f"HF_TOKEN={token}")
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    commands.answers[INSPECT] = (0, json.dumps(items), "")
    result = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert result["vllm_image"]["env"]["HF_TOKEN"] == "********"
    assert result["vllm_image"]["env"]["PATH"].startswith("/opt/vllm/bin:")
    assert token not in json.dumps(result)


def test_a_damaged_kept_answer_is_probed_again_and_replaced(cache):
    inspect = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    cache.mkdir()
    (cache / probe_cache_name(inspect["id"])).write_text("SPARKINFER_VLLM_IMAGE_PROBE {half a li", encoding="utf-8")
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)["vllm_image"]
    assert (image["probe_cached"], len(commands.calls)) == (False, 2)
    assert (cache / probe_cache_name(inspect["id"])).read_text(encoding="utf-8") == fixture("vllm-cpu-0.32.0-lab.probe.txt")


def test_a_cache_that_cannot_be_written_warns_and_the_facts_still_come(cache):
    cache.write_text("a file where the directory should be", encoding="utf-8")
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        image = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))["vllm_image"]
    assert image["vllm_version"] == "0.32.0"
    assert "the next run probes again" in warn.call_args.args[0]


def test_without_the_cache_every_run_probes(cache):
    for _run in range(2):
        commands = docker_answering("vllm-cpu-0.32.0-lab")
        run_module(main, {"probe_cache_dir": str(cache), "probe_cache": False, "image": IMAGE}, commands)
        assert len(commands.calls) == 2
    assert not cache.exists()


def test_a_digest_pin_fails_the_lab_image_before_any_probe(cache):
    # The lab's image is built on the node's engine (classic store): it has no registry digest.
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    pin = "sha256:" + "4" * 64
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_digest": pin}, commands)
    assert "sparkinfer-lab-vllm:latest (sha256:" in failure.value.result["msg"]
    assert f"has no registry digest, so it is not the build pinned as {pin}" in failure.value.result["msg"]
    assert commands.calls == [INSPECT]


def test_a_digest_that_is_not_one_is_refused(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_digest": "4413e0f2"}, FakeCommands({}))
    assert failure.value.result["msg"] == "require_digest is '4413e0f2'; give a registry digest as sha256: and 64 hexadecimal digits"


def test_an_image_of_the_pinned_digest_passes(cache):
    demo = (FIXTURES.parent / "docker_image" / "inspect-28.5.2-containerd-demo-1.json").read_text(encoding="utf-8")
    commands = FakeCommands({bounded(60, DOCKER, "image", "inspect", "demo:1"): (0, demo, "")})
    pin = "sha256:3f17112459c868eff071b6cb86427f616d5e456a834a426d009c225282808194"
    result = run_module(main, {"probe_cache_dir": str(cache), "image": "demo:1", "probe": False, "require_digest": pin}, commands)
    assert result["vllm_image"]["repo_digests"] == [f"demo@{pin}"]


def test_an_image_older_than_the_minimum_vllm_is_refused_after_its_probe(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_vllm_version": "99.0"}, commands)
    assert failure.value.result["msg"] == (
        "sparkinfer-lab-vllm:latest has vLLM 0.32.0, older than 99.0, the first release this deployment accepts: use an image with vLLM 99.0 or later."
    )
    passed = run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_vllm_version": "0.32.0"}, docker_answering("vllm-cpu-0.32.0-lab"))
    assert passed["vllm_image"]["vllm_version"] == "0.32.0"


def test_a_minimum_vllm_that_is_not_a_release_is_refused(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_vllm_version": "v0.17"}, FakeCommands({}))
    assert failure.value.result["msg"] == "require_vllm_version is 'v0.17'; give a vLLM release as MAJOR.MINOR[.PATCH], such as 0.17.0"
