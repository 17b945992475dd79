"""A digest pin against real `docker image inspect` outputs (fixtures/docker_image/SOURCES.md): the pin holds only when
the image's registry digests include it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import DIGEST_PATTERN, digest_problem, parse_image_inspect, registry_digests

FIXTURES = Path(__file__).parent / "fixtures" / "docker_image"
# Read off the fixtures' RepoDigests by hand.
DEMO_1 = "sha256:3f17112459c868eff071b6cb86427f616d5e456a834a426d009c225282808194"
DEMO_MULTI = "sha256:4413e0f21f0799d715a0d7b487ff9a0fdeba529243a45251c5abd1a6ef220e6a"
DEMO_MULTI_LOADED_ARM64 = "sha256:354266b3709778d48f9b4520c281e1216c02acb280cf9de31aca2eae5a128a6e"


def image(name: str) -> dict:
    return parse_image_inspect((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def test_the_digest_of_each_repository_entry():
    assert registry_digests(image("inspect-28.5.2-containerd-demo-1")["repo_digests"]) == [DEMO_1]
    assert registry_digests(image("inspect-20.10.24-classic-demo-2-loaded")["repo_digests"]) == []


def test_an_image_with_the_pinned_digest_passes():
    assert digest_problem("demo:1", image("inspect-28.5.2-containerd-demo-1"), DEMO_1) is None
    assert digest_problem("demo:multi", image("inspect-28.5.2-containerd-demo-multi"), DEMO_MULTI) is None


def test_a_tag_on_another_build_names_the_digest_it_has_and_the_pull():
    # docker save --platform, then load: the tag now stands for another index, with another digest.
    problem = digest_problem("demo:multi", image("inspect-28.5.2-containerd-demo-multi-loaded-platform-arm64"), DEMO_MULTI)
    assert problem == (
        f"demo:multi is not the build pinned as {DEMO_MULTI}: its registry digest is {DEMO_MULTI_LOADED_ARM64} (its tag moved to another "
        f"build). To serve the pinned build, pull the pinned build on the source node (docker pull demo@{DEMO_MULTI}, then docker tag "
        f"demo@{DEMO_MULTI} demo:multi), or pin the digest of the build you tested."
    )


@pytest.mark.parametrize("name", ["inspect-20.10.24-classic-demo-2-loaded", "inspect-28.5.2-classic-demo-2-loaded"])
def test_an_image_loaded_on_the_classic_store_has_no_digest_to_pin(name):
    problem = digest_problem("registry.example:5000/team/demo:2", image(name), DEMO_1)
    assert problem is not None
    assert problem.startswith("registry.example:5000/team/demo:2 (sha256:") and f"has no registry digest, so it is not the build pinned as {DEMO_1}" in problem
    assert f"docker pull registry.example:5000/team/demo@{DEMO_1}" in problem


@pytest.mark.parametrize("digest", [DEMO_1, DEMO_MULTI])
def test_a_digest_is_sha256_and_64_hexadecimal_digits(digest):
    assert DIGEST_PATTERN.match(digest)
    assert not DIGEST_PATTERN.match(digest[:-1])
    assert not DIGEST_PATTERN.match(digest.upper())
    assert not DIGEST_PATTERN.match("demo@" + digest)
