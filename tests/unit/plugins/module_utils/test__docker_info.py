"""The docker info parser, on real outputs (provenance in fixtures/gb10/SOURCES.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_info import DockerInfoParseError, parse_docker_info

FIXTURES = Path(__file__).parent / "fixtures" / "gb10"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_lab_node_with_the_nvidia_runtime_registered():
    info = parse_docker_info(fixture("docker-info-20.10.24-lab-node-nvidia-runtime.json"))
    assert info.as_dict() == {
        "server_version": "20.10.24+dfsg1",
        "runtimes": ["io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "nvidia", "runc"],
        "default_runtime": "runc",
        "nvidia_runtime_path": "nvidia-container-runtime",
        "nvidia_runtime": True,
        "cgroup_driver": "cgroupfs",
        "storage_driver": "vfs",
        "image_store": "classic",
        "root_dir": "/var/lib/docker",
        "server_errors": [],
    }
    assert info.answered


def test_docker_desktop_engine_with_the_nvidia_runtime():
    info = parse_docker_info(fixture("docker-engine-info-28.2.2-docker-desktop-wsl2-nvidia.json"))
    assert (info.server_version, info.runtimes, info.nvidia_runtime, info.nvidia_runtime_path) == (
        "28.2.2",
        ("io.containerd.runc.v2", "nvidia", "runc"),
        True,
        "nvidia-container-runtime",
    )
    assert (info.default_runtime, info.cgroup_driver, info.storage_driver, info.root_dir) == ("runc", "cgroupfs", "overlayfs", "/var/lib/docker")
    assert info.answered


@pytest.mark.parametrize("name", ["docker-info-20.10.24-lab-node-no-nvidia-runtime.json", "docker-info-client-28.2.2-server-20.10.24-lab-host.json"])
def test_engines_without_the_nvidia_runtime(name):
    info = parse_docker_info(fixture(name))
    assert info.answered
    assert info.server_version == "20.10.24+dfsg1"
    assert info.nvidia_runtime is False
    assert info.nvidia_runtime_path is None
    assert "runc" in info.runtimes


def test_lab_host_engine_uses_overlay2():
    info = parse_docker_info(fixture("docker-info-client-28.2.2-server-20.10.24-lab-host.json"))
    assert (info.storage_driver, info.cgroup_driver, info.image_store) == ("overlay2", "cgroupfs", "classic")


@pytest.mark.parametrize(
    ("name", "version", "driver", "store"),
    [
        ("docker-info-28.5.2-containerd-store.json", "28.5.2+dfsg4", "overlayfs", "containerd"),
        ("docker-engine-info-28.2.2-docker-desktop-wsl2-nvidia.json", "28.2.2", "overlayfs", "containerd"),
        ("docker-info-26.1.5-containerd-store.json", "26.1.5+dfsg1", "overlayfs", "containerd"),
        # The same engine as the first, without "features": {"containerd-snapshotter": true}.
        ("docker-info-28.5.2-classic-store.json", "28.5.2+dfsg4", "overlay2", "classic"),
    ],
)
def test_the_image_store_is_read_from_the_driver_status(name, version, driver, store):
    info = parse_docker_info(fixture(name))
    assert (info.server_version, info.storage_driver, info.image_store) == (version, driver, store)


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("docker-info-20.10.24-daemon-down.json", "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"),
        ("docker-info-20.10.24-permission-denied.json", "permission denied while trying to connect to the Docker daemon socket"),
    ],
)
def test_old_client_reaching_no_daemon_reports_server_errors(name, error):
    info = parse_docker_info(fixture(name))
    assert not info.answered
    assert info.server_version is None
    assert info.runtimes == ()
    (message,) = info.server_errors
    assert message.startswith(error)


def test_new_client_reaching_no_daemon_prints_empty_server_fields():
    info = parse_docker_info(fixture("docker-info-28.2.2-daemon-down.json"))
    assert not info.answered
    assert (info.server_version, info.runtimes, info.server_errors, info.default_runtime, info.image_store) == (None, (), (), None, None)


def test_output_that_is_not_json_is_refused():
    stderr_line = fixture("docker-info-28.2.2-daemon-down.stderr.txt")
    with pytest.raises(DockerInfoParseError, match="printed no JSON document: 'Cannot connect to the Docker daemon"):
        parse_docker_info(stderr_line)
    with pytest.raises(DockerInfoParseError, match="printed no JSON document: ''"):
        parse_docker_info("")


def test_a_document_of_another_shape_is_refused():
    document = json.loads(fixture("docker-info-20.10.24-lab-node-nvidia-runtime.json"))
    with pytest.raises(DockerInfoParseError, match="a JSON list, not an object"):
        parse_docker_info(json.dumps([document]))
    with pytest.raises(DockerInfoParseError, match="Runtimes is a list"):
        parse_docker_info(json.dumps({**document, "Runtimes": sorted(document["Runtimes"])}))
    with pytest.raises(DockerInfoParseError, match="DriverStatus is a dict"):
        parse_docker_info(json.dumps({**document, "DriverStatus": {"driver-type": "io.containerd.snapshotter.v1"}}))
    errors = json.loads(fixture("docker-info-20.10.24-daemon-down.json"))
    with pytest.raises(DockerInfoParseError, match="ServerErrors is a str"):
        parse_docker_info(json.dumps({**errors, "ServerErrors": errors["ServerErrors"][0]}))
