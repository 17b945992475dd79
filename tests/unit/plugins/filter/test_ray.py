"""ray_start_argv, ray_cluster_start_spec and ray_cluster_firewall_ports: the module_utils' answers, and their refusals as filter errors."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.ray import FilterModule, ray_cluster_firewall_ports, ray_cluster_start_spec, ray_start_argv


def test_the_filter_is_registered():
    assert FilterModule().filters() == {
        "ray_start_argv": ray_start_argv,
        "ray_cluster_start_spec": ray_cluster_start_spec,
        "ray_cluster_firewall_ports": ray_cluster_firewall_ports,
    }


def test_a_refusal_is_a_filter_error_named_after_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"^ray_start_argv: the spec must be a mapping, got str"):
        ray_start_argv("192.168.100.10")


def test_firewall_ports_refuse_what_is_no_mapping_and_a_port_that_is_missing():
    with pytest.raises(AnsibleFilterError, match=r"^ray_cluster_firewall_ports: expected ray_cluster's variables as a mapping, got list"):
        ray_cluster_firewall_ports([6379])
    with pytest.raises(AnsibleFilterError, match=r"^ray_cluster_firewall_ports: a port variable is missing or no number: 'ray_cluster_port'"):
        ray_cluster_firewall_ports({})


def test_the_start_spec_refuses_what_is_no_mapping_and_names_a_missing_variable():
    with pytest.raises(AnsibleFilterError, match=r"^ray_cluster_start_spec: expected ray_cluster's variables as a mapping, got str"):
        ray_cluster_start_spec("6379")
    with pytest.raises(AnsibleFilterError, match=r"^ray_cluster_start_spec: the variables lack 'ray_cluster_node_ip'"):
        ray_cluster_start_spec({})
