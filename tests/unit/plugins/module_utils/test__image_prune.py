"""Which images a node served before go (module_utils/_image_prune.py), on Docker's real answers (fixtures/docker_prune)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.sparkinfer.cluster.plugins.module_utils._image_prune import images_to_prune

FIXTURES = Path(__file__).parent / "fixtures" / "docker_prune"
LATEST_ID = "sha256:3328af494b2cad71423bdcedc349ac945dad7ea66bca3d741f1489f21eafda41"
DANGLING_ID = "sha256:b377f20be69ba6853c72933d2eb97501fdf6e033c4c149322001eb8354e9f217"
CURRENT = "sparkinfer-lab-vllm:moved"


def fixture(name: str) -> list[dict]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


CREATED_BY_NAME = fixture("containers-one-created-by-name-latest.json")
CREATED_BY_ID = fixture("containers-one-created-by-id-of-latest.json")
TWO_NAMES = fixture("images-fleet-a-latest-dangling.json")
ONE_NAME = fixture("images-latest-only-dangling.json")


def test_a_second_name_of_a_used_build_and_a_nameless_build_go_the_used_id_stays_a_gone_image_is_forgotten():
    record = [CURRENT, "sparkinfer-lab-vllm:fleet-a", LATEST_ID, DANGLING_ID, "sparkinfer-lab-vllm:gone"]
    assert images_to_prune(record, 0, CREATED_BY_NAME, TWO_NAMES) == {
        # fleet-a only untags: latest still names the build prune-user uses.
        "remove": ["sparkinfer-lab-vllm:fleet-a", DANGLING_ID],
        "images": [CURRENT, LATEST_ID],
        "kept": {LATEST_ID: "a container uses it"},
    }


def test_the_newest_and_keep_more_stay_whatever_they_are():
    record = [CURRENT, DANGLING_ID, "sparkinfer-lab-vllm:fleet-a"]
    assert images_to_prune(record, 1, [], TWO_NAMES) == {"remove": ["sparkinfer-lab-vllm:fleet-a"], "images": [CURRENT, DANGLING_ID], "kept": {}}
    assert images_to_prune(record, 2, [], TWO_NAMES) == {"remove": [], "images": record, "kept": {}}


def test_an_id_whose_build_still_has_names_stays_even_unused():
    found = images_to_prune([CURRENT, LATEST_ID], 0, [], TWO_NAMES)
    assert found == {
        "remove": [],
        "images": [CURRENT, LATEST_ID],
        "kept": {LATEST_ID: "it is still named sparkinfer-lab-vllm:fleet-a, sparkinfer-lab-vllm:latest"},
    }


def test_the_name_a_container_was_started_by_stays():
    # Given without its tag, as a user may: Docker lists it with :latest.
    for entry in ("sparkinfer-lab-vllm:latest", "sparkinfer-lab-vllm"):
        assert images_to_prune([CURRENT, entry], 0, CREATED_BY_NAME, TWO_NAMES)["kept"] == {entry: "a container uses it"}


def test_the_last_name_of_a_build_a_container_started_by_its_id_uses_stays_and_goes_once_it_is_unused():
    assert images_to_prune([CURRENT, "sparkinfer-lab-vllm:latest", LATEST_ID], 0, CREATED_BY_ID, ONE_NAME) == {
        "remove": [],
        "images": [CURRENT, "sparkinfer-lab-vllm:latest", LATEST_ID],
        "kept": {"sparkinfer-lab-vllm:latest": "a container uses it", LATEST_ID: "a container uses it"},
    }
    assert images_to_prune([CURRENT, "sparkinfer-lab-vllm:latest"], 0, [], ONE_NAME)["remove"] == ["sparkinfer-lab-vllm:latest"]
    # With another name left, the name only untags.
    assert images_to_prune([CURRENT, "sparkinfer-lab-vllm:latest"], 0, CREATED_BY_ID, TWO_NAMES)["remove"] == ["sparkinfer-lab-vllm:latest"]


def test_a_record_of_one_image_or_none_removes_nothing():
    assert images_to_prune([CURRENT], 0, CREATED_BY_NAME, []) == {"remove": [], "images": [CURRENT], "kept": {}}
    assert images_to_prune([], 1, CREATED_BY_NAME, []) == {"remove": [], "images": [], "kept": {}}


@pytest.mark.parametrize("keep", [-1, True, 1.5, "1"])
def test_a_keep_that_is_no_whole_number_of_0_or_more_is_refused(keep):
    with pytest.raises(ValueError, match="vllm_serve_keep_images must be a whole number of 0 or more"):
        images_to_prune([CURRENT], keep, [], [])


def test_a_name_on_another_registry_port_is_matched_with_its_tag():
    # A registry's port is no tag: the name without one is :latest there too.
    held = [{"Id": DANGLING_ID, "RepoTags": ["localhost:5000/sparkinfer-no-vllm:latest"]}]
    assert images_to_prune([CURRENT, "localhost:5000/sparkinfer-no-vllm"], 0, [], held)["remove"] == ["localhost:5000/sparkinfer-no-vllm"]


def test_an_entry_whose_image_is_gone_is_forgotten_and_the_older_ones_still_judged():
    without_the_dangling = [image for image in ONE_NAME if image["Id"] != DANGLING_ID]
    record = [CURRENT, DANGLING_ID, "sparkinfer-lab-vllm:gone", "sparkinfer-lab-vllm:latest"]
    assert images_to_prune(record, 0, [], without_the_dangling) == {"remove": ["sparkinfer-lab-vllm:latest"], "images": [CURRENT], "kept": {}}
