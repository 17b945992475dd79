"""vllm_image's rules on its variables alone, on the role's defaults as spark-b of the worked inventory
(inventories/example-two-sparks) settles them and the mistakes a user makes in them; vllm_image's preflight and
validate_inventory.yml judge by the same rules."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image_settings import setting_problems

DIGEST = "sha256:" + "4" * 64
WORKED = {
    "vllm_image_name": "vllm/vllm-openai:v0.17.1",
    "vllm_image_digest": "",
    "vllm_image_min_vllm_version": "0.17.0",
    "vllm_image_cluster_hosts": ["spark-a", "spark-b"],
    "vllm_image_source_host": "spark-a",
    "vllm_image_source": "node",
    "vllm_image_tarball": "",
    "vllm_image_transfer_timeout": 7200,
    "vllm_image_transfer_address": "192.168.177.12",
    "vllm_image_transfer_user": "sparkops",
    "vllm_image_transfer_key": "/root/.ssh/sparkinfer_transfer_ed25519",
    "vllm_image_transfer_known_hosts": "/root/.ssh/sparkinfer_transfer_known_hosts",
    "vllm_image_model_path": "/opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8",
}
ALONE = {**WORKED, "vllm_image_cluster_hosts": ["spark-a"], "vllm_image_source_host": "spark-a"}


def test_the_worked_inventorys_values_hold_together():
    assert setting_problems("spark-b", WORKED) == []
    assert setting_problems("spark-b", {**WORKED, "vllm_image_digest": DIGEST}) == []


def test_nothing_set_is_nothing_judged():
    assert setting_problems("spark-b", {}) == []


def test_an_image_is_named_by_its_tag():
    [empty] = setting_problems("spark-b", {**WORKED, "vllm_image_name": ""})
    assert empty.startswith("vllm_image_name is empty: set it to the image to serve (name:tag), or set sparkinfer_recipe")
    [pinned] = setting_problems("spark-b", {**WORKED, "vllm_image_name": f"vllm/vllm-openai@{DIGEST}"})
    assert pinned.startswith(f"vllm_image_name is vllm/vllm-openai@{DIGEST}: name the image by its tag (name:tag) and pin its build")


@pytest.mark.parametrize("digest", ["4413e0f2", "sha256:" + "4" * 63, "sha512:" + "4" * 64, "sha256:" + "A" * 64])
def test_a_pin_is_a_registry_digest(digest):
    assert setting_problems("spark-b", {**WORKED, "vllm_image_digest": digest}) == [
        f"vllm_image_digest is {digest}: give a registry digest, sha256: and 64 hexadecimal digits, or nothing."
    ]


@pytest.mark.parametrize(("minimum", "wrong"), [("v0.17", True), ("0.17.0rc1", True), ("latest", True), ("0.17", False), ("", False)])
def test_the_minimum_vllm_is_a_release(minimum, wrong):
    problems = setting_problems("spark-b", {**WORKED, "vllm_image_min_vllm_version": minimum})
    assert problems == ([f"vllm_image_min_vllm_version is {minimum}: give a vLLM release as MAJOR.MINOR[.PATCH] (0.17.0), or nothing."] if wrong else [])


def test_the_source_is_a_node_of_the_cluster():
    assert setting_problems("spark-b", {**WORKED, "vllm_image_source_host": "spark-z"}) == [
        "vllm_image_source_host is spark-z, which is not in vllm_image_cluster_hosts (spark-a, spark-b)."
    ]


def test_a_load_names_its_tarball():
    assert setting_problems("spark-b", {**WORKED, "vllm_image_source": "load"}) == [
        "vllm_image_source is load: set vllm_image_tarball to the image archive (docker save output) on spark-a."
    ]
    assert setting_problems("spark-b", {**WORKED, "vllm_image_source": "load", "vllm_image_tarball": "/srv/vllm.tar"}) == []


@pytest.mark.parametrize(("timeout", "wrong"), [(0, True), (-1, True), (1, False)])
def test_the_transfer_timeout_is_above_0(timeout, wrong):
    problems = setting_problems("spark-b", {**WORKED, "vllm_image_transfer_timeout": timeout})
    assert problems == ([f"vllm_image_transfer_timeout is {timeout}: give the seconds a pull, load or transfer may take, above 0."] if wrong else [])


def test_a_receiving_node_without_a_fabric_address_is_named():
    [problem] = setting_problems("spark-b", {**WORKED, "vllm_image_transfer_address": ""})
    assert problem.startswith("spark-b has no fabric address for the image and model transfer: run the nccl_network role first")


@pytest.mark.parametrize("address", ["192.0.2.12;touch /tmp/sparkinfer-injected;echo", "spark-b", "192.168.177.12/24", "fe80::1"])
def test_a_transfer_address_that_is_no_ipv4_address_is_refused_before_it_reaches_ssh(address):
    [problem] = setting_problems("spark-b", {**WORKED, "vllm_image_transfer_address": address})
    assert problem.startswith(f"vllm_image_transfer_address on spark-b is '{address}', which is not an IPv4 address (as 192.168.100.11).")


@pytest.mark.parametrize(("user", "wrong"), [("sparkops@192.0.2.12 touch /tmp/x;", True), ("Ops", True), ("9ops", True), ("_ops-1", False)])
def test_the_transfer_user_is_a_plain_account_name(user, wrong):
    problems = setting_problems("spark-b", {**WORKED, "vllm_image_transfer_user": user})
    assert problems == (
        [f"vllm_image_transfer_user is '{user}': give an account name of lowercase letters, digits, '_' and '-', starting with a letter or '_'."]
        if wrong
        else []
    )


def test_a_node_alone_transfers_nothing_so_its_transfer_values_are_not_judged():
    assert setting_problems("spark-a", {**ALONE, "vllm_image_transfer_address": "", "vllm_image_transfer_user": "Ops"}) == []


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("vllm_image_transfer_key", "/root/key;touch /tmp/sparkinfer-injected"),
        ("vllm_image_transfer_known_hosts", "root/.ssh/known_hosts"),
        ("vllm_image_model_path", "/opt/x $(touch /tmp/sparkinfer-injected)"),
    ],
)
def test_the_transfers_paths_are_absolute_and_plain(name, path):
    assert setting_problems("spark-b", {**ALONE, name: path}) == [
        f"{name} is '{path}': give an absolute path of letters, digits and '/', '.', '_', '+', '-' only (it reaches ssh and rsync on the source node)."
    ]


def test_no_model_path_is_no_model_to_copy():
    assert setting_problems("spark-b", {**WORKED, "vllm_image_model_path": ""}) == []
    assert setting_problems("spark-b", {**WORKED, "vllm_image_transfer_key": ""})[0].startswith("vllm_image_transfer_key is ''")
