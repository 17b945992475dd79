"""docker_image_fingerprint and docker_save_platform: the module_utils' answers, and their refusals as filter errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.filter.docker_image import FilterModule, docker_image_fingerprint, docker_save_platform

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "docker_image"


def inspect(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))[0]


def test_the_filters_are_registered():
    assert FilterModule().filters() == {"docker_image_fingerprint": docker_image_fingerprint, "docker_save_platform": docker_save_platform}


def test_a_copy_on_the_classic_store_has_the_fingerprint_of_the_containerd_original():
    original, copy = inspect("inspect-28.5.2-containerd-demo-2.json"), inspect("inspect-28.5.2-classic-demo-2-loaded.json")
    assert docker_image_fingerprint(original) == docker_image_fingerprint(copy)


def test_the_save_platform_follows_the_store_and_the_version():
    image = inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")
    assert docker_save_platform(image, "containerd", "28.5.2+dfsg4") == "linux/arm64"
    assert docker_save_platform(image, "classic", "28.5.2+dfsg4") == ""


def test_refusals_are_filter_errors_named_after_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"^docker_image_fingerprint: an image inspect result must be a dictionary"):
        docker_image_fingerprint(None)
    with pytest.raises(AnsibleFilterError, match=r"^docker_save_platform: the inspect result of an image names no Os"):
        docker_save_platform({}, "containerd", "29.1.0")
