"""container_entrypoint: the program runs through an image's wrapper entrypoint, else in its place; container_state: what
the doctor reads of a container.

The entrypoints are real images': NGC's (the lab's NGC-shaped capture, whose entrypoint NGC vLLM images have: "This
image's ENTRYPOINT is /opt/nvidia/nvidia_entrypoint.sh, not ["vllm"]"), the lab vLLM image's, and an entrypoint script
of the kind env-configured images ship (fixtures/vllm_image/SOURCES.md). The containers' states are
community.docker.docker_container_info's results on the `make site` pair's worker after its reboot (`docker restart
spark-2`): its vLLM rank exited with the node, and no Ray container (fixtures/container/).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.container import container_entrypoint, container_state
from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import parse_image_inspect

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "vllm_image"
STATES = Path(__file__).parent / "fixtures" / "container"


def entrypoint_of(name: str) -> list[str]:
    return parse_image_inspect((FIXTURES / f"{name}.inspect.json").read_text(encoding="utf-8"))["entrypoint"]


@pytest.mark.parametrize("program", ["vllm", "ray"])
def test_an_ngc_image_runs_the_program_through_its_wrapper(program):
    assert container_entrypoint(entrypoint_of("vllm-cpu-0.32.0-ngc-compat-590.48.01"), program) == ["/opt/nvidia/nvidia_entrypoint.sh", program]


@pytest.mark.parametrize("name", ["vllm-cpu-0.32.0-lab", "vllm-cpu-0.32.0-envvar-entrypoint", "no-vllm-lab-node"])
def test_any_other_entrypoint_is_replaced_by_the_program(name):
    assert container_entrypoint(entrypoint_of(name), "vllm") == ["vllm"]


def test_an_image_without_an_entrypoint_or_one_not_read_runs_the_program():
    assert container_entrypoint(None, "ray") == ["ray"]
    assert container_entrypoint([], "ray") == ["ray"]


def test_a_wrapper_with_its_own_arguments_keeps_the_wrapper_alone():
    # ENTRYPOINT ["/opt/nvidia/nvidia_entrypoint.sh", "/usr/sbin/sshd", "-D"] of a public Dockerfile built on an NGC image.
    assert container_entrypoint(["/opt/nvidia/nvidia_entrypoint.sh", "/usr/sbin/sshd", "-D"], "vllm") == ["/opt/nvidia/nvidia_entrypoint.sh", "vllm"]


@pytest.mark.parametrize(("entrypoint", "program"), [("vllm serve", "vllm"), ([1], "vllm"), (["vllm"], "")])
def test_what_is_not_an_entrypoint_and_a_program_is_refused(entrypoint, program):
    with pytest.raises(AnsibleFilterError, match="container_entrypoint: expected"):
        container_entrypoint(entrypoint, program)


def container_info(name: str) -> dict:
    return json.loads((STATES / f"docker-container-info-{name}.json").read_text(encoding="utf-8"))


def test_the_state_of_a_rank_that_exited_with_its_node():
    assert container_state(container_info("rank-exited-after-reboot"), "sparkinfer-vllm") == {
        "name": "sparkinfer-vllm",
        "status": "exited",
        "exit_code": 255,
        "oom_killed": False,
        "restart_count": 0,
        "image_id": "sha256:5e866db54fcea676ed04a54192a7f545f1caf49f7d2f29a475c2a2650a1f7d74",
        "started_at": "2026-12-07T08:23:08.831748438Z",
    }


def test_the_state_of_a_container_that_does_not_exist():
    assert container_state(container_info("absent"), "sparkinfer-ray") == {"name": "sparkinfer-ray", "status": "absent"}


@pytest.mark.parametrize("info", [None, {"container": {}}, {"exists": "yes"}])
def test_what_is_not_docker_container_infos_result_is_refused(info):
    with pytest.raises(AnsibleFilterError, match="container_state: expected the result of community"):
        container_state(info, "sparkinfer-vllm")
