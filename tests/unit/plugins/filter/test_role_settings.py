"""nccl_network_setting_problems and ray_cluster_setting_problems as the roles' preflights and validate_inventory.yml call them."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.role_settings import (
    FilterModule,
    nccl_network_setting_problems,
    ray_cluster_setting_problems,
    vllm_image_setting_problems,
)


def test_it_judges_the_variables_of_the_node_it_names():
    [problem] = nccl_network_setting_problems({"nccl_network_fabric_addresses": ["192.168.177.11"]}, "spark-a")
    assert problem.startswith("nccl_network_fabric_addresses on spark-a holds 192.168.177.11;")


def test_what_is_no_mapping_is_refused():
    with pytest.raises(AnsibleFilterError, match="nccl_network_setting_problems: expected the variables as a mapping, got list"):
        nccl_network_setting_problems(["192.168.177.11"], "spark-a")


def test_ray_cluster_judges_the_variables_of_the_node_it_names():
    [problem] = ray_cluster_setting_problems({"ray_cluster_state": "started", "ray_cluster_node_ip": "spark-b"}, "spark-a")
    assert problem.startswith("ray_cluster_node_ip on spark-a is 'spark-b', not an IPv4 address")


def test_ray_cluster_refuses_what_is_no_mapping():
    with pytest.raises(AnsibleFilterError, match="ray_cluster_setting_problems: expected the variables as a mapping, got str"):
        ray_cluster_setting_problems("ray_cluster_port=6379", "spark-a")


def test_vllm_image_judges_the_variables_of_the_node_it_names():
    [problem] = vllm_image_setting_problems({"vllm_image_cluster_hosts": ["spark-a", "spark-b"], "vllm_image_transfer_address": ""}, "spark-b")
    assert problem.startswith("spark-b has no fabric address for the image and model transfer")


def test_vllm_image_refuses_what_is_no_mapping():
    with pytest.raises(AnsibleFilterError, match="vllm_image_setting_problems: expected the variables as a mapping, got list"):
        vllm_image_setting_problems([], "spark-a")


def test_the_three_filters_are_registered():
    assert sorted(FilterModule().filters()) == ["nccl_network_setting_problems", "ray_cluster_setting_problems", "vllm_image_setting_problems"]
