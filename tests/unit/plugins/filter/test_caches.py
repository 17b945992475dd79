"""vllm_cache_mounts: each cache's volume and variable, and refusals that name the variable and the fix."""

from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.caches import FilterModule, vllm_cache_mounts


def test_the_filter_is_registered():
    assert FilterModule().filters() == {"vllm_cache_mounts": vllm_cache_mounts}


def test_every_cache_gets_its_volume_and_the_variable_its_program_reads():
    dirs = {
        "vllm": "/opt/sparkinfer/cache/vllm",
        "triton": "/opt/sparkinfer/cache/triton",
        "flashinfer": "/opt/sparkinfer/cache/flashinfer",
        "huggingface": "/opt/sparkinfer/cache/huggingface",
    }
    assert vllm_cache_mounts(dirs) == {
        "volumes": [
            "/opt/sparkinfer/cache/flashinfer:/var/cache/sparkinfer/flashinfer",
            "/opt/sparkinfer/cache/huggingface:/var/cache/sparkinfer/huggingface",
            "/opt/sparkinfer/cache/triton:/var/cache/sparkinfer/triton",
            "/opt/sparkinfer/cache/vllm:/var/cache/sparkinfer/vllm",
        ],
        "env": {
            "FLASHINFER_WORKSPACE_BASE": "/var/cache/sparkinfer/flashinfer",
            "HF_HOME": "/var/cache/sparkinfer/huggingface",
            "TRITON_CACHE_DIR": "/var/cache/sparkinfer/triton",
            "VLLM_CACHE_ROOT": "/var/cache/sparkinfer/vllm",
        },
    }


def test_no_cache_mounts_nothing():
    assert vllm_cache_mounts({}) == {"volumes": [], "env": {}}


def test_an_unknown_cache_is_refused_with_the_known_ones():
    with pytest.raises(AnsibleFilterError, match=r"^vllm_serve_cache_dirs names the unknown caches torch; allowed are flashinfer, huggingface, triton, vllm$"):
        vllm_cache_mounts({"torch": "/opt/torch"}, variable="vllm_serve_cache_dirs")


@pytest.mark.parametrize("host_dir", ["cache/vllm", "/opt/a:b", "/opt/a,b", "/opt/a\nb", 7, None])
def test_a_host_directory_docker_cannot_mount_is_refused_naming_it(host_dir):
    with pytest.raises(AnsibleFilterError, match=r"^vllm_serve_cache_dirs\['vllm'\] is .*; give an absolute host path"):
        vllm_cache_mounts({"vllm": host_dir}, variable="vllm_serve_cache_dirs")


def test_a_list_is_refused_naming_the_variable():
    with pytest.raises(AnsibleFilterError, match=r"^ray_cluster_cache_dirs must be a mapping of cache name to host directory, got list$"):
        vllm_cache_mounts(["/opt/sparkinfer/cache/vllm"], variable="ray_cluster_cache_dirs")
