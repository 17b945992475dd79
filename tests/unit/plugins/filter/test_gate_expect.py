"""vllm_gate_expect: the module_utils' answer, and its refusals as filter errors."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.gate_expect import FilterModule, vllm_gate_expect

SETTINGS = {"tensor_parallel_size": 2, "pipeline_parallel_size": 1}


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"vllm_gate_expect": vllm_gate_expect}


def test_the_expectations_and_their_sources():
    gate = vllm_gate_expect({}, {}, SETTINGS, {"model": "/m", "load_format": "fastsafetensors"}, {}, rdma=1)
    assert gate == {
        "expect": {"tensor_parallel_size": 2, "pipeline_parallel_size": 1, "nccl_transport": "NET/IB", "load_format": "fastsafetensors"},
        "sources": {"load_format": "the serve spec"},
    }


def test_what_is_no_mapping_a_bad_spec_and_settings_without_sizes_are_filter_errors():
    with pytest.raises(AnsibleFilterError, match=r"^vllm_gate_expect: expected given as a mapping, got list"):
        vllm_gate_expect({}, {}, SETTINGS, {}, [], rdma=False)
    with pytest.raises(AnsibleFilterError, match=r"^vllm_gate_expect: "):
        vllm_gate_expect({}, {}, SETTINGS, {"model": "/m", "load_format": 7}, {}, rdma=False)
    with pytest.raises(AnsibleFilterError, match=r"^vllm_gate_expect: the settings lack a parallel size"):
        vllm_gate_expect({}, {}, {}, {}, {}, rdma=False)
