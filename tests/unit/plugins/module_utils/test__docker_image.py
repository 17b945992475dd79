"""Image identity across engines and image stores, and the save's platform, on real inspect results (fixtures/docker_image/SOURCES.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_image import DockerImageError, image_fingerprint, save_platform

FIXTURES = Path(__file__).parent / "fixtures" / "docker_image"
DEMO_2_COPIES = [
    "inspect-28.5.2-containerd-demo-2.json",
    "inspect-28.5.2-containerd-demo-2-loaded-whole.json",
    "inspect-28.5.2-containerd-demo-2-loaded-platform-amd64.json",
    "inspect-28.5.2-classic-demo-2-loaded.json",
    "inspect-20.10.24-classic-demo-2-loaded.json",
]


def inspect(name: str) -> dict:
    (image,) = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return image


def test_one_image_copied_to_every_kind_of_engine_has_three_ids_and_one_fingerprint():
    copies = [inspect(name) for name in DEMO_2_COPIES]
    # The index's digest, kept by a whole save; the amd64 manifest's, after save --platform; the config's, on classic.
    ids = [copy["Id"][7:19] for copy in copies]
    assert ids == ["72b09a8c6b46", "72b09a8c6b46", "4091bc931c63", "a9f1ed6a48b7", "a9f1ed6a48b7"]
    assert len({image_fingerprint(copy) for copy in copies}) == 1
    assert image_fingerprint(copies[0]).startswith("sha256:") and len(image_fingerprint(copies[0])) == 71


def test_docker_20_10_reports_empty_container_fields_in_the_config_that_the_fingerprint_leaves_out():
    old, new = inspect("inspect-20.10.24-classic-demo-2-loaded.json"), inspect("inspect-28.5.2-containerd-demo-2.json")
    assert old["Config"] != new["Config"]
    assert (old["Config"]["Hostname"], old["Config"]["AttachStdin"]) == ("", False)
    assert "Hostname" not in new["Config"]
    assert image_fingerprint(old) == image_fingerprint(new)


def test_another_image_or_another_platform_of_the_same_image_has_another_fingerprint():
    demo_1, demo_2 = inspect("inspect-28.5.2-containerd-demo-1.json"), inspect("inspect-28.5.2-containerd-demo-2.json")
    assert image_fingerprint(demo_1) != image_fingerprint(demo_2)
    # demo:multi's two platforms hold the same layers and config: only the platform tells them apart.
    amd64, arm64 = inspect("inspect-28.5.2-containerd-demo-multi.json"), inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")
    assert amd64["RootFS"] == arm64["RootFS"] and amd64["Config"] == arm64["Config"]
    assert (amd64["Architecture"], arm64["Architecture"]) == ("amd64", "arm64")
    assert image_fingerprint(amd64) != image_fingerprint(arm64)


def test_two_images_that_differ_only_in_one_env_line_have_two_fingerprints():
    # Built from one base, the one ENV line apart (fixtures/docker_image/SOURCES.md): no layer or platform tells them apart.
    env_1, env_2 = inspect("inspect-20.10.24-classic-env-1.json"), inspect("inspect-20.10.24-classic-env-2.json")
    assert env_1["RootFS"] == env_2["RootFS"]
    assert (env_1["Os"], env_1["Architecture"]) == (env_2["Os"], env_2["Architecture"]) == ("linux", "amd64")
    assert (env_1["Config"]["Env"][-1], env_2["Config"]["Env"][-1]) == ("SPARKINFER_FIXTURE=1", "SPARKINFER_FIXTURE=2")
    assert image_fingerprint(env_1) != image_fingerprint(env_2)


@pytest.mark.parametrize("variant", ["v8", "8", "v8.0"])
def test_an_arm64_image_reported_with_its_default_variant_on_one_engine_and_none_on_another_is_one_image(variant):
    # Engines differ in whether they report arm64's default variant: the same image, with one fact changed.
    arm64 = inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")
    assert "Variant" not in arm64
    assert image_fingerprint({**arm64, "Variant": variant}) == image_fingerprint(arm64)
    assert image_fingerprint({**arm64, "Architecture": "aarch64"}) == image_fingerprint(arm64)
    # Another variant is another platform.
    assert image_fingerprint({**arm64, "Variant": "v9"}) != image_fingerprint(arm64)


def test_a_platform_saved_from_an_index_is_the_image_the_source_reports_for_that_platform():
    asked = inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")
    loaded = inspect("inspect-28.5.2-containerd-demo-multi-loaded-platform-arm64.json")
    assert asked["Id"] == loaded["Id"]
    assert image_fingerprint(asked) == image_fingerprint(loaded)
    assert image_fingerprint(loaded) != image_fingerprint(inspect("inspect-28.5.2-containerd-demo-multi.json"))


@pytest.mark.parametrize(
    ("store", "version", "platform"),
    [
        # Docker 28.5.2 and Docker Desktop 28.2.2 with the containerd store (fixtures/gb10's docker info of each).
        ("containerd", "28.5.2+dfsg4", "linux/amd64"),
        ("containerd", "28.2.2", "linux/amd64"),
        # Docker 26.1.5 with the containerd store: its docker save knows no --platform (fixtures/gb10's docker info).
        ("containerd", "26.1.5+dfsg1", ""),
        # The classic store holds one platform: saved whole.
        ("classic", "28.5.2+dfsg4", ""),
        ("classic", "20.10.24+dfsg1", ""),
    ],
)
def test_an_engine_with_the_containerd_store_saves_the_image_for_its_platform(store, version, platform):
    assert save_platform(store, version, inspect("inspect-28.5.2-containerd-demo-multi.json")) == platform


def test_an_image_of_docker_26_on_the_containerd_store_has_a_fingerprint_and_is_saved_whole():
    image = inspect("inspect-26.1.5-containerd-demo-1.json")
    assert image_fingerprint(image).startswith("sha256:")
    assert save_platform("containerd", "26.1.5+dfsg1", image) == ""


def test_an_arm64_image_is_saved_for_arm64():
    assert save_platform("containerd", "28.5.2+dfsg4", inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")) == "linux/arm64"


def test_an_inspect_result_without_layers_or_platform_is_refused_naming_the_image():
    image = inspect("inspect-28.5.2-containerd-demo-1.json")
    with pytest.raises(DockerImageError, match=re.escape(f"the inspect result of {image['Id']} has no RootFS.Layers or Architecture")):
        image_fingerprint({**image, "RootFS": {"Type": "layers"}})
    with pytest.raises(DockerImageError, match=r"has no RootFS\.Layers or Architecture"):
        image_fingerprint({**image, "Architecture": ""})
    with pytest.raises(DockerImageError, match="must be a dictionary, got list"):
        image_fingerprint([image])
    with pytest.raises(DockerImageError, match="names no Os or Architecture to save it for"):
        save_platform("containerd", "28.5.2", {**image, "Os": ""})


def test_an_image_of_another_os_with_the_same_layers_is_another_image():
    # The same inspect result with one fact changed: the platform's OS.
    image = inspect("inspect-28.5.2-containerd-demo-2.json")
    assert image["Os"] == "linux"
    assert image_fingerprint({**image, "Os": "windows"}) != image_fingerprint(image)


def test_an_architecture_without_a_default_variant_keeps_its_variant():
    # The same inspect result as a 32-bit arm image: arm has no default variant, so v6 and v7 are two platforms.
    image = inspect("inspect-28.5.2-containerd-demo-2.json")
    assert image_fingerprint({**image, "Architecture": "arm", "Variant": "v7"}) != image_fingerprint({**image, "Architecture": "arm", "Variant": "v6"})


def test_an_image_with_a_variant_is_saved_for_its_variant():
    # The arm64 image as an engine that reports arm64's default variant shows it.
    arm64 = inspect("inspect-28.5.2-containerd-demo-multi-platform-arm64.json")
    assert save_platform("containerd", "28.5.2+dfsg4", {**arm64, "Variant": "v8"}) == "linux/arm64/v8"


def test_the_refusals_name_the_image_by_its_id_or_as_an_image():
    image = inspect("inspect-28.5.2-containerd-demo-1.json")
    # Layers that are not a list (one layer's digest alone).
    with pytest.raises(DockerImageError) as refused:
        image_fingerprint({**image, "RootFS": {"Type": "layers", "Layers": image["RootFS"]["Layers"][0]}})
    assert str(refused.value) == f"the inspect result of {image['Id']} has no RootFS.Layers or Architecture"
    without_id = {key: value for key, value in image.items() if key != "Id"}
    with pytest.raises(DockerImageError) as refused:
        image_fingerprint({**without_id, "Architecture": ""})
    assert str(refused.value) == "the inspect result of an image has no RootFS.Layers or Architecture"
    with pytest.raises(DockerImageError) as refused:
        save_platform("containerd", "28.5.2", {**image, "Architecture": ""})
    assert str(refused.value) == f"the inspect result of {image['Id']} names no Os or Architecture to save it for"
