"""fabric_facts end to end in-process, on the generated sysfs trees of test__fabric (fixtures/fabric/SOURCES.md)."""

from __future__ import annotations

from unittest import mock

import pytest
from ansible.module_utils import basic

from ansible_collections.sparkinfer.cluster.plugins.module_utils import _fabric
from ansible_collections.sparkinfer.cluster.plugins.modules import fabric_facts

from ..module_utils.test__fabric import EINVAL, NO_RDMA, SPARK_GID_DRIFT, SPARK_PORT1_UP, build, refusing
from .module_harness import ModuleFail, run_module


@pytest.fixture
def sysfs_tree(tmp_path, monkeypatch):
    """Build a tree under tmp_path/sys and make its EINVAL files fail as the kernel does; return the root."""

    def make(tree: dict) -> str:
        root = tmp_path / "sys"
        root.mkdir()
        monkeypatch.setattr(_fabric, "read_attribute", refusing(build(root, tree)))
        return str(root)

    return make


def fabric(result: dict) -> dict:
    return result["ansible_facts"]["sparkinfer_fabric"]


@pytest.mark.parametrize("check_mode", [False, True])
def test_spark_with_port_1_up(sysfs_tree, check_mode):
    root = sysfs_tree(SPARK_PORT1_UP)
    result = run_module(fabric_facts.main, {"sysfs_root": root, "_ansible_check_mode": check_mode})
    facts = fabric(result)
    assert result["changed"] is False
    assert facts["rdma_present"] is True
    assert facts["twins"] == [["rocep1s0f0", "roceP2p1s0f0"], ["rocep1s0f1", "roceP2p1s0f1"]]
    up = [hca for hca in facts["hcas"] if hca["state"] == "ACTIVE"]
    assert [(hca["name"], hca["netdev"], hca["roce_v2_ipv4_gids"], hca["twin"]) for hca in up] == [
        ("rocep1s0f1", "enp1s0f1np1", [{"index": 3, "address": "192.168.100.10"}], "roceP2p1s0f1"),
        ("roceP2p1s0f1", "enP2p1s0f1np1", [{"index": 3, "address": "192.168.101.10"}], "rocep1s0f1"),
    ]
    assert facts == _fabric.fabric_facts(_fabric.SysfsReader(root).read())


def test_drifted_gid_index(sysfs_tree):
    facts = fabric(run_module(fabric_facts.main, {"sysfs_root": sysfs_tree(SPARK_GID_DRIFT), "hcas": ["roceP2p1s0f1"]}))
    assert [(hca["name"], hca["roce_v2_ipv4_gids"]) for hca in facts["hcas"]] == [("roceP2p1s0f1", [{"index": 5, "address": "192.168.101.10"}])]


def test_no_rdma_is_reported_not_failed(sysfs_tree):
    facts = fabric(run_module(fabric_facts.main, {"sysfs_root": sysfs_tree(NO_RDMA)}))
    assert (facts["rdma_present"], facts["hcas"], facts["twins"]) == (False, [], [])
    assert [netdev["name"] for netdev in facts["netdevs"]] == ["eth0"]


def test_unknown_hca_in_filter_warns(sysfs_tree):
    root = sysfs_tree(SPARK_PORT1_UP)
    with mock.patch.object(basic.AnsibleModule, "warn") as warn:
        facts = fabric(run_module(fabric_facts.main, {"sysfs_root": root, "hcas": ["rocep1s0f1", "mlx5_0"]}))
    assert [hca["name"] for hca in facts["hcas"]] == ["rocep1s0f1"]
    warn.assert_called_once_with(f"hcas mlx5_0 not found under {root}/class/infiniband")


def test_missing_sysfs_root_fails_with_the_fix(tmp_path):
    missing = str(tmp_path / "nosys")
    with pytest.raises(ModuleFail) as failure:
        run_module(fabric_facts.main, {"sysfs_root": missing})
    assert (
        failure.value.result["msg"] == f"sysfs_root {missing} is not a directory: mount sysfs there (mount -t sysfs sysfs {missing}) or point sysfs_root at it"
    )


def test_unreadable_sysfs_fails_naming_the_file(sysfs_tree):
    root = sysfs_tree({**SPARK_PORT1_UP, "devices/pci0002:00/0002:00:00.0/0002:01:00.1/infiniband/roceP2p1s0f1/ports/1/state": EINVAL})
    with pytest.raises(ModuleFail) as failure:
        run_module(fabric_facts.main, {"sysfs_root": root})
    message = failure.value.result["msg"]
    assert message.startswith("cannot read the RDMA fabric from sysfs: cannot read ")
    assert message.endswith(f"/roceP2p1s0f1/ports/1/state: Invalid argument; run with become, or check that sysfs is mounted at {root}")


def test_empty_sysfs_root_fails(tmp_path):
    with pytest.raises(ModuleFail) as failure:
        run_module(fabric_facts.main, {"sysfs_root": str(tmp_path)})
    assert f"cannot list {tmp_path}/class/net: No such file or directory" in failure.value.result["msg"]


def test_unexpected_sysfs_text_fails_with_the_reason(sysfs_tree):
    root = sysfs_tree({**NO_RDMA, "devices/pci0000:00/0000:00:03.0/virtio2/net/eth0/mtu": "jumbo"})
    with pytest.raises(ModuleFail) as failure:
        run_module(fabric_facts.main, {"sysfs_root": root})
    assert failure.value.result["msg"] == f"cannot parse the RDMA fabric from sysfs under {root}: eth0 mtu 'jumbo' is not a number"
