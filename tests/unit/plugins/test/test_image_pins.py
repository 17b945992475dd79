"""registry_digest and vllm_release: the patterns vllm_image_info, the recipe checker and vllm_image's preflight share."""

from __future__ import annotations

import pytest

from ansible_collections.sparkinfer.cluster.plugins.test.image_pins import TestModule as ImagePinTests
from ansible_collections.sparkinfer.cluster.plugins.test.image_pins import registry_digest, vllm_release

# The digest of the containerd demo-1 fixture (module_utils/fixtures/docker_image), read off its RepoDigests.
DIGEST = "sha256:3f17112459c868eff071b6cb86427f616d5e456a834a426d009c225282808194"


def test_the_tests_are_registered():
    assert ImagePinTests().tests() == {"registry_digest": registry_digest, "vllm_release": vllm_release}


def test_a_registry_digest_passes_and_what_is_not_one_fails():
    assert registry_digest(DIGEST)
    for value in (DIGEST[:-1], DIGEST.upper(), f"demo@{DIGEST}", DIGEST[7:], f" {DIGEST}", "", None, 4413):
        assert not registry_digest(value), value


@pytest.mark.parametrize("value", ["0.17", "0.17.0", "0.32.0", "10.0.1"])
def test_a_release_passes(value):
    assert vllm_release(value)


@pytest.mark.parametrize("value", ["v0.17", "0.17.0rc1", "0.32.0+cpu", "0.1.dev7557+g977180c", "latest", "0", "", None, 0.17])
def test_what_is_not_a_release_fails(value):
    assert not vllm_release(value)
