"""ray_raylet_info on real `docker top` outputs (module_utils/fixtures/docker_top/SOURCES.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import ray_raylet_info

from .module_harness import FakeCommands, ModuleFail, RecordingCommands, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "docker_top"
TOP = ("/usr/bin/timeout", "--kill-after=10", "60", "/usr/bin/docker", "top", "sparkinfer-ray", "-o", "pid,args")
NODE_ID = "b172939baed8fa565a5707f286d055da070f16eb7968c9d0722f7f33"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_running_head_gives_its_raylet(check_mode):
    commands = RecordingCommands({TOP: (0, fixture("ray-2.60.0-head.top.txt"), "")})
    result = run_module(ray_raylet_info.main, {"container": "sparkinfer-ray", "_ansible_check_mode": check_mode}, commands)
    assert result["changed"] is False
    assert (result["container_exists"], result["container_running"]) == (True, True)
    assert result["raylet"] == {"pid": 23831, "node_id": NODE_ID, "node_ip_address": "127.0.0.1"}
    assert result["cmd"] == list(TOP)
    assert commands.kwargs == [{"environ_update": {"LC_ALL": "C"}}]


@pytest.mark.parametrize(
    ("stderr", "exists"),
    [("stopped.stderr.txt", True), ("no-such-container.stderr.txt", False)],
)
def test_a_container_that_does_not_run_is_a_reading(stderr, exists):
    result = run_module(ray_raylet_info.main, {"container": "sparkinfer-ray"}, FakeCommands({TOP: (1, "", fixture(stderr))}))
    assert (result["container_exists"], result["container_running"], result["raylet"]) == (exists, False, None)


def test_a_docker_daemon_that_fails_fails_the_module_naming_it():
    # What the lab machine's Docker 20.10 client printed, rc 1: docker -H unix:///tmp/no-docker-here.sock top sparkinfer-ray -o pid,args
    error = "Cannot connect to the Docker daemon at unix:///tmp/no-docker-here.sock. Is the docker daemon running?\n"
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_raylet_info.main, {"container": "sparkinfer-ray"}, FakeCommands({TOP: (1, "", error)}))
    assert failed.value.result["msg"] == (
        "`docker top sparkinfer-ray` failed: Cannot connect to the Docker daemon at unix:///tmp/no-docker-here.sock. "
        "Is the docker daemon running?: check that the Docker daemon runs"
    )


def test_a_docker_top_that_hangs_fails_naming_the_command():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_raylet_info.main, {"container": "sparkinfer-ray"}, FakeCommands({TOP: (124, "", "")}))
    assert failed.value.result["msg"] == (
        "`/usr/bin/docker top sparkinfer-ray -o pid,args` did not finish within 60 s and was stopped: the Docker daemon does not answer"
    )


def test_the_command_timeout_must_be_positive():
    with pytest.raises(ModuleFail) as failed:
        run_module(ray_raylet_info.main, {"container": "sparkinfer-ray", "command_timeout": 0}, FakeCommands({}))
    assert failed.value.result["msg"] == "command_timeout must be a positive number of seconds, not 0"
