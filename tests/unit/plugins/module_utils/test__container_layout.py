"""A container's layout as roles declare it (their vars/main.yml): bind mounts as Docker's volumes, with the lab's and
the worked inventory's paths, and the environment as layers of variables."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.container import container_env, container_volumes
from ansible_collections.sparkinfer.cluster.plugins.module_utils._bind_mounts import BindMountError, bind_volumes

MODEL = "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8"


def test_the_volumes_keep_the_order_and_read_only_mounts_end_in_ro():
    mounts = [
        {"source": MODEL, "read_only": True},
        ["/var/cache/sparkinfer/vllm:/root/.cache/vllm"],
        [],
        "/srv/extra:/extra:ro",
        {"source": "/var/lib/sparkinfer/ray", "target": "/tmp/ray", "wanted": True},
        {"source": "/etc/sparkinfer/ray-auth-token", "target": "/run/sparkinfer/ray-auth-token", "read_only": True, "wanted": False},
    ]
    assert bind_volumes(mounts) == [
        f"{MODEL}:{MODEL}:ro",
        "/var/cache/sparkinfer/vllm:/root/.cache/vllm",
        "/srv/extra:/extra:ro",
        "/var/lib/sparkinfer/ray:/tmp/ray",
    ]


def test_a_mount_not_wanted_is_not_checked():
    # With TLS off the certificate is '': the mount is left out, not refused.
    assert bind_volumes([{"source": "", "target": "/run/sparkinfer/tls/cert.pem", "read_only": True, "wanted": False}]) == []


@pytest.mark.parametrize(
    ("mount", "said"),
    [
        ({"source": "models/qwen"}, "has the source 'models/qwen': give an absolute path without ':'"),
        ({"source": "/opt/a:b"}, "has the source '/opt/a:b': give an absolute path without ':'"),
        ({"source": "/opt/a", "target": "tmp"}, "has the target 'tmp': give an absolute path without ':'"),
        ({"target": "/tmp"}, "has the source None"),
        (3, "a mount must be a volume string, a list of them or a mapping with its source, got 3"),
    ],
)
def test_what_docker_cannot_mount_is_refused_by_name(mount, said):
    with pytest.raises(BindMountError, match=said.replace("(", r"\(").replace(")", r"\)")):
        bind_volumes([mount])


def test_the_filter_names_itself():
    assert container_volumes([{"source": MODEL, "read_only": True}]) == [f"{MODEL}:{MODEL}:ro"]
    with pytest.raises(AnsibleFilterError, match="container_volumes: the mounts must be a list, got dict"):
        container_volumes({"source": MODEL})


def test_the_env_layers_merge_in_order_and_a_layer_not_wanted_is_never_read():
    class Unreadable(dict):
        def get(self, key, default=None):
            if key == "env":
                raise AssertionError("a layer not wanted was read")
            return super().get(key, default)

    layers = [
        {"env": {"NVIDIA_VISIBLE_DEVICES": "all", "PYTHONPATH": "/opt/image"}},
        Unreadable(wanted=False),
        {"env": {"PYTHONPATH": "/opt/sparkinfer/python:/opt/image"}, "wanted": True},
    ]
    assert container_env(layers) == {"NVIDIA_VISIBLE_DEVICES": "all", "PYTHONPATH": "/opt/sparkinfer/python:/opt/image"}


@pytest.mark.parametrize(
    ("layers", "said"),
    [
        ({"env": {}}, "container_env: the layers must be a list, got dict"),
        ([["A=1"]], "container_env: layer 1 must be a mapping with its env, got list"),
        ([{"env": {}}, {"env": "VLLM_API_KEY=s3cret"}], "container_env: layer 2's env must map variable names to values, got str"),
    ],
)
def test_a_layer_that_is_no_mapping_of_variables_is_named_by_its_position(layers, said):
    with pytest.raises(AnsibleFilterError, match=said) as refused:
        container_env(layers)
    assert "s3cret" not in str(refused.value)
