"""vllm_image_info end to end in-process, fed real docker outputs (fixtures/vllm_image/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path
from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import PROBE_SCRIPT, parse_image_inspect, probe_cache_name
from ansible_collections.sparkinfer.cluster.plugins.modules import vllm_image_info

from .module_harness import FakeCommands, ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm_image"
DOCKER = "/usr/bin/docker"
IMAGE = "sparkinfer-lab-vllm:latest"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture(name="cache")
def fixture_cache(tmp_path: Path) -> Path:
    """Each test's own probe cache, never the host's."""
    return tmp_path / "vllm-image-probes"


def docker_answering(name: str) -> FakeCommands:
    inspect = fixture(f"{name}.inspect.json")
    image = parse_image_inspect(inspect)
    probe = (DOCKER, "run", "--rm", "--network", "none", "--entrypoint", "python3", image["id"], "-c", PROBE_SCRIPT, "300", *image["entrypoint"], *image["cmd"])
    return FakeCommands({(DOCKER, "image", "inspect", IMAGE): (0, inspect, ""), probe: (0, fixture(f"{name}.probe.txt"), "")})


@pytest.mark.parametrize("check_mode", [False, True])
def test_an_image_with_the_model_class_and_ray_passes(check_mode, cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    result = run_module(
        vllm_image_info.main,
        {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"], "require_ray": True, "_ansible_check_mode": check_mode},
        commands,
    )
    assert result["changed"] is False
    assert result["missing_architectures"] == []
    image = result["vllm_image"]
    assert (image["present"], image["vllm_version"], image["ray_version"]) == (True, "0.32.0", "2.60.0")
    assert len(commands.calls) == 2


def test_an_image_without_the_model_class_fails_before_anything_starts(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(
            vllm_image_info.main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"]},
            docker_answering("vllm-cpu-0.32.0-lab"),
        )
    result = failure.value.result
    assert result["msg"].startswith("sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM")
    assert result["missing_architectures"][0]["architecture"] == "SparkinferTinyMoeForCausalLM"


def test_the_ray_executor_needs_ray_in_the_image(cache):
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE, "require_ray": True}, docker_answering("no-vllm-lab-node"))
    assert "has no working ray (ModuleNotFoundError: No module named 'ray'), which the Ray executor needs" in failure.value.result["msg"]


def test_an_env_var_entrypoint_is_reported(cache):
    image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-envvar-entrypoint"))[
        "vllm_image"
    ]
    assert image["env_configured_entrypoint"] is True
    assert image["entrypoint_env_vars"] == ["VLLM_GPU_MEMORY_UTIL", "VLLM_MAX_MODEL_LEN"]


def test_an_absent_image_is_reported_not_failed(cache):
    commands = FakeCommands({(DOCKER, "image", "inspect", IMAGE): (1, "[]", f"Error: No such image: {IMAGE}")})
    result = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"]}, commands)
    assert result["vllm_image"]["present"] is False
    assert result["vllm_image"]["id"] is None


def test_without_the_probe_only_inspect_runs(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE, "probe": False}, commands)["vllm_image"]
    assert image["entrypoint"] == ["vllm", "serve"]
    assert "vllm_version" not in image
    assert len(commands.calls) == 1


def test_a_docker_failure_is_reported(cache):
    commands = FakeCommands({(DOCKER, "image", "inspect", IMAGE): (1, "", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock.")})
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert "Cannot connect to the Docker daemon" in failure.value.result["msg"]


def test_a_probe_that_prints_nothing_is_reported(cache):
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    probe = next(call for call in commands.answers if call[1] == "run")
    commands.answers[probe] = (127, "", "exec: python3: not found")
    with pytest.raises(ModuleFail) as failure:
        run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)
    assert failure.value.result["msg"] == f"cannot probe {IMAGE} (rc=127): the image probe printed no result (does the image have python3?)"
    assert image["id"] in probe


def test_a_probe_answer_is_kept_and_answers_the_next_run_without_a_container(cache):
    first = docker_answering("vllm-cpu-0.32.0-lab")
    probed = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, first)["vllm_image"]
    again = docker_answering("vllm-cpu-0.32.0-lab")
    kept = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["Qwen3MoeForCausalLM"]}, again)
    assert (probed["probe_cached"], kept["vllm_image"]["probe_cached"]) == (False, True)
    assert [call[1] for call in again.calls] == ["image"], "the kept answer should have spared the probe container"
    assert {**kept["vllm_image"], "probe_cached": False} == probed
    assert kept["changed"] is False


def test_the_kept_answer_still_refuses_an_image_without_the_model_class(cache):
    run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))
    with pytest.raises(ModuleFail) as failure:
        run_module(
            vllm_image_info.main,
            {"probe_cache_dir": str(cache), "image": IMAGE, "model_architectures": ["SparkinferTinyMoeForCausalLM"]},
            docker_answering("vllm-cpu-0.32.0-lab"),
        )
    assert failure.value.result["msg"].startswith("sparkinfer-lab-vllm:latest (vLLM 0.32.0) has no SparkinferTinyMoeForCausalLM")


def test_another_image_is_probed_not_answered_from_the_first_ones_file(cache):
    run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))
    other = docker_answering("vllm-cpu-0.32.0-envvar-entrypoint")
    image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, other)["vllm_image"]
    assert (image["probe_cached"], image["env_configured_entrypoint"]) == (False, True)
    assert len(list(cache.iterdir())) == 2


def test_check_mode_and_an_answer_with_errors_keep_nothing(cache):
    run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE, "_ansible_check_mode": True}, docker_answering("vllm-cpu-0.32.0-lab"))
    image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("no-vllm-lab-node"))["vllm_image"]
    assert image["probe_errors"]
    assert not cache.exists() or not list(cache.iterdir())


def test_a_damaged_kept_answer_is_probed_again_and_replaced(cache):
    inspect = parse_image_inspect(fixture("vllm-cpu-0.32.0-lab.inspect.json"))
    cache.mkdir()
    (cache / probe_cache_name(inspect["id"])).write_text("SPARKINFER_VLLM_IMAGE_PROBE {half a li", encoding="utf-8")
    commands = docker_answering("vllm-cpu-0.32.0-lab")
    image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, commands)["vllm_image"]
    assert (image["probe_cached"], len(commands.calls)) == (False, 2)
    assert (cache / probe_cache_name(inspect["id"])).read_text(encoding="utf-8") == fixture("vllm-cpu-0.32.0-lab.probe.txt")


def test_a_cache_that_cannot_be_written_warns_and_the_facts_still_come(cache):
    cache.write_text("a file where the directory should be", encoding="utf-8")
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        image = run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "image": IMAGE}, docker_answering("vllm-cpu-0.32.0-lab"))["vllm_image"]
    assert image["vllm_version"] == "0.32.0"
    assert "the next run probes again" in warn.call_args.args[0]


def test_without_the_cache_every_run_probes(cache):
    for _run in range(2):
        commands = docker_answering("vllm-cpu-0.32.0-lab")
        run_module(vllm_image_info.main, {"probe_cache_dir": str(cache), "probe_cache": False, "image": IMAGE}, commands)
        assert len(commands.calls) == 2
    assert not cache.exists()
