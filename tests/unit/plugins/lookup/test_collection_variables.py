"""collection_variables: every variable name the collection reads, from its roles' real argument specifications."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.sparkinfer.cluster.plugins.lookup.collection_variables import LookupModule


def test_it_returns_the_roles_options_and_the_playbooks_variables_sorted():
    [names] = LookupModule().run([])
    assert names == sorted(names)
    assert {"gb10_host_allowed_gpus", "nccl_network_fabric_addresses", "vllm_image_name", "ray_cluster_port", "vllm_serve_port", "sparkinfer_recipe"} <= set(
        names
    )
    assert not [name for name in names if name.startswith("__")]


def test_it_takes_no_terms():
    with pytest.raises(AnsibleLookupError, match="collection_variables takes no terms"):
        LookupModule().run(["gb10_host"])
