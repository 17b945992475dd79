"""What a node's support bundle shows: of its NCCL environment file the values of the names the collection writes only,
of its containers' inspects no environment value, and nowhere a secret (a real inspect of a lab rank)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.doctor import doctor_bundle_env, doctor_bundle_files
from ansible_collections.sparkinfer.cluster.plugins.filter.fabric import nccl_roce_env
from ansible_collections.sparkinfer.cluster.plugins.module_utils._bundle_mask import WRITTEN_BY_THE_COLLECTION, masked_env_file

REPO = Path(__file__).resolve().parents[4]
# The file as nccl_network's template writes it on a lab node of the RoCE path (roles/nccl_network/templates/nccl.env.j2),
# with what a user added by hand or through an earlier inventory's nccl_network_extra_env after it.
WRITTEN = """# Ansible managed
# The NCCL, Gloo, UCX, vLLM and Ray environment of e2e-spark-1 (ib transport),
GLOO_SOCKET_IFNAME=enp1s0f1np1
MASTER_ADDR=192.168.177.11
NCCL_DEBUG=INFO
NCCL_DEBUG_SUBSYS=INIT,NET
NCCL_IB_DISABLE=0
NCCL_IB_GID_INDEX=3
NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1
NCCL_SOCKET_IFNAME=enp1s0f1np1
RAY_NODE_IP_ADDRESS=192.168.177.11
TP_SOCKET_IFNAME=enp1s0f1np1
UCX_NET_DEVICES=enp1s0f1np1
VLLM_HOST_IP=192.168.177.11"""
ADDED = "HF_TOKEN=hf_PLANTEDtoken\nWANDB_API_KEY=planted-wandb\nexport AWS_SECRET_ACCESS_KEY=planted-aws\n\n=planted-no-name"


def test_the_names_the_collection_writes_are_the_ones_nccl_network_writes():
    tasks = (REPO / "roles" / "nccl_network" / "tasks" / "environment.yml").read_text(encoding="utf-8")
    roce = inspect.getsource(nccl_roce_env)
    written = set(re.findall(r"^\s+([A-Z][A-Z0-9_]+): ", tasks, re.MULTILINE)) | set(re.findall(r"'([A-Z][A-Z0-9_]+)': '", tasks))
    written |= set(re.findall(r'"(NCCL_[A-Z_]+)"', roce))
    assert written == WRITTEN_BY_THE_COLLECTION


def test_the_collection_s_values_stay_and_comments_too():
    assert masked_env_file(WRITTEN) == WRITTEN


def test_every_other_value_is_masked_whoever_put_it_there():
    shown = masked_env_file(WRITTEN + "\n" + ADDED)
    assert shown.splitlines()[-5:] == ["HF_TOKEN=<masked>", "WANDB_API_KEY=<masked>", "<masked>", "", "<masked>"]
    assert "PLANTED" not in shown and "planted" not in shown


def test_a_name_of_the_collection_is_matched_whole():
    assert masked_env_file("NCCL_IB_HCA_SECRET=x\nVLLM_HOST_IPX=y") == "NCCL_IB_HCA_SECRET=<masked>\nVLLM_HOST_IPX=<masked>"


def test_the_filter_wants_the_text():
    assert doctor_bundle_env("HF_TOKEN=x") == "HF_TOKEN=<masked>"
    with pytest.raises(AnsibleFilterError, match="expected the file's text, got dict"):
        doctor_bundle_env({})


RANK = json.loads(
    (Path(__file__).parents[1] / "filter" / "fixtures" / "container" / "docker-container-info-rank-exited-after-reboot.json").read_text(encoding="utf-8")
)["container"]
KEY = "k3yK3yk3yK3yk3yK3yk3yK3yk3yK3yk3yK3yk3yK"


def command(name, stdout="", stderr="", skipped=False):
    result = {"item": {"name": name, "argv": ["timeout", "10", name]}, "stdout": stdout, "stderr": stderr}
    return {**result, "skipped": True} if skipped else result


def test_a_bundle_holds_each_command_then_the_inspects_then_the_readings_in_order():
    files = doctor_bundle_files(
        [
            command("ip-addr.txt", "1: lo: <LOOPBACK,UP>\n"),
            command("vllm.log", "", "Error: No such container: sparkinfer-vllm"),
            command("ray-status.txt", skipped=True),
        ],
        {"nccl.env": "NCCL_SOCKET_IFNAME=enp1s0f1np1", "gb10.json": {"gpu_name": "NVIDIA GB10"}},
        [RANK],
        [],
    )
    assert [file["name"] for file in files] == ["ip-addr.txt", "vllm.log", "docker-inspect.json", "nccl.env", "gb10.json"]
    assert files[0]["content"] == "1: lo: <LOOPBACK,UP>"
    # A failed command's error is its evidence.
    assert files[1]["content"] == "Error: No such container: sparkinfer-vllm"
    assert json.loads(files[4]["content"]) == {"gpu_name": "NVIDIA GB10"}


def test_every_environment_value_of_an_inspected_container_is_masked_and_the_rest_kept():
    [inspect] = json.loads(doctor_bundle_files([], {}, [RANK], [])[0]["content"])
    assert inspect["Config"]["Env"] == [entry.split("=", 1)[0] + "=<masked>" for entry in RANK["Config"]["Env"]]
    assert "VLLM_HOST_IP=<masked>" in inspect["Config"]["Env"]
    assert (inspect["Name"], inspect["State"]) == (RANK["Name"], RANK["State"])


def test_each_secret_is_masked_wherever_it_stands_and_an_empty_one_masks_nothing():
    files = doctor_bundle_files(
        [command("docker-ps.txt", f"sparkinfer-vllm vllm serve --api-key {KEY}")], {"vllm-log-facts.json": {"note": f"key {KEY}\n"}}, [], [f"{KEY}\n", "", "  "]
    )
    assert KEY not in json.dumps(files)
    assert files[0]["content"] == "sparkinfer-vllm vllm serve --api-key <masked>"


def test_what_is_not_a_loops_results_files_inspects_and_secrets_is_refused():
    with pytest.raises(AnsibleFilterError, match="doctor_bundle_files: expected the results of the commands' loop"):
        doctor_bundle_files([{"stdout": "x"}], {}, [], [])
    with pytest.raises(AnsibleFilterError, match="doctor_bundle_files: expected files as a mapping of names"):
        doctor_bundle_files([], [], [], [])
