"""A node's record of its launches read as data: only the inputs vllm_serve writes, each of its shape (_launch_inputs.py).

The records are real: the inputs of the lab pair's launch as doctor.yml read them (tests/unit/plugins/filter/fixtures/
doctor, captured by lab/doctor-capture/capture.sh). The tampered ones add what root on a node could write.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

from ansible_collections.sparkinfer.cluster.plugins.filter.launch_inputs import vllm_launch_inputs_of
from ansible_collections.sparkinfer.cluster.plugins.module_utils._launch_inputs import LAUNCH_INPUTS, checked_launch_record

REPO = Path(__file__).resolve().parents[4]
CAPTURED = REPO / "tests" / "unit" / "plugins" / "filter" / "fixtures" / "doctor" / "healthy-pair-with-ray" / "e2e-spark-1.json"


def captured_inputs() -> dict:
    reading = json.loads(CAPTURED.read_text(encoding="utf-8"))
    return reading["vllm"]["inputs"]["current"]


# The lab image's ID and an earlier build's, as docker image inspect named them on a lab machine.
LATEST_ID = "sha256:d97ded2a098ea39cd588b3342ee732d0602ce5577b74ac8d7e5b3335e40cd5ca"
BEFORE_ID = "sha256:fb88bcaadb81b88a787cb559ee3008db15f972ef11fe33d3c527532236956c6c"
NO_IDS = {"current": "", "previous": ""}


def record() -> dict:
    current = captured_inputs()
    previous = {**current, "vllm_serve_image": "sparkinfer-lab-vllm:before", "vllm_serve_max_model_len": 512}
    return {
        "current": current,
        "previous": previous,
        "images": ["sparkinfer-lab-vllm:latest", "sparkinfer-lab-vllm:before"],
        "image_ids": {"current": LATEST_ID, "previous": BEFORE_ID},
    }


def walk(tasks: list[dict]):
    """Every task, those in blocks and rescues at any depth among them."""
    for task in tasks:
        yield task
        yield from walk(task.get("block", []) + task.get("rescue", []) + task.get("always", []))


def test_the_inputs_are_the_ones_the_role_writes_and_the_rollout_sets_back():
    role_vars = yaml.safe_load((REPO / "roles" / "vllm_serve" / "vars" / "main.yml").read_text(encoding="utf-8"))
    assert role_vars["__vllm_serve_inputs"] == "{{ __vllm_serve_variables | sparkinfer.cluster.vllm_launch_inputs_of }}"
    assert list(vllm_launch_inputs_of({**dict.fromkeys(reversed(LAUNCH_INPUTS), 1), "vllm_serve_port": 8000})) == list(LAUNCH_INPUTS)
    rollout = yaml.safe_load((REPO / "playbooks" / "rollout.yml").read_text(encoding="utf-8"))
    set_back = next(
        task
        for task in walk([task for play in rollout for task in play.get("tasks", [])])
        if task.get("name") == "Set the variables back to what shaped the launch before"
    )
    assert list(set_back["ansible.builtin.set_fact"]) == list(LAUNCH_INPUTS)
    # The image by the build it served (its ID) when the name moved on: settled by the task before.
    assert set_back["ansible.builtin.set_fact"]["vllm_serve_image"] == "{{ __rollout_restore_image }}"


def test_a_record_the_role_wrote_is_kept_whole():
    kept = checked_launch_record(json.dumps(record()))
    assert kept == {**record(), "refused": []}
    assert kept["current"]["vllm_serve_image"] == "sparkinfer-lab-vllm:latest"


@pytest.mark.parametrize("nothing", [None, {}, "", "  \n"])
def test_no_record_is_empty_and_refuses_nothing(nothing):
    assert checked_launch_record(nothing) == {"current": {}, "previous": {}, "images": [], "image_ids": NO_IDS, "refused": []}


def test_a_record_written_before_the_ids_were_kept_has_none():
    older = record()
    del older["image_ids"]
    assert checked_launch_record(older) == {**older, "image_ids": NO_IDS, "refused": []}


@pytest.mark.parametrize(
    ("image_ids", "why"),
    [
        ({"current": "sha256:d97ded2a098e"}, "image_ids.current (must be an image ID, sha256: and 64 hexadecimal digits)"),
        ({"current": LATEST_ID + "; rm -rf /"}, "image_ids.current (must be an image ID, sha256: and 64 hexadecimal digits)"),
        ({"next": LATEST_ID}, "image_ids.next (not a part of the record the collection writes)"),
        ([LATEST_ID], "image_ids is a list, not a dictionary"),
    ],
)
def test_an_image_id_that_is_not_one_is_refused(image_ids, why):
    tampered = {**record(), "image_ids": image_ids}
    kept = checked_launch_record(tampered)
    assert kept["refused"] == [why]
    assert kept["image_ids"]["previous"] in ("", BEFORE_ID)


def test_a_name_the_collection_never_writes_is_refused_and_dropped_without_its_value():
    tampered = record()
    tampered["current"]["ansible_connection"] = "local"
    tampered["previous"]["ansible_become_exe"] = "/tmp/x"
    tampered["ansible_python_interpreter"] = "/usr/bin/python3"
    kept = checked_launch_record(tampered)
    assert kept["refused"] == [
        "ansible_python_interpreter (not a part of the record the collection writes)",
        "current.ansible_connection (not an input the collection writes)",
        "previous.ansible_become_exe (not an input the collection writes)",
    ]
    assert set(kept["current"]) == set(kept["previous"]) == set(LAUNCH_INPUTS)
    assert "local" not in json.dumps(kept)


@pytest.mark.parametrize(
    ("name", "value", "why"),
    [
        ("vllm_serve_image", ["a", "list"], "must be a string, is a list"),
        ("vllm_serve_executor", "local", "must be mp or ray, is a str"),
        ("vllm_serve_tensor_parallel_size", True, "must be a whole number, is a bool"),
        ("vllm_serve_tensor_parallel_size", "2", "must be a whole number, is a str"),
        ("vllm_serve_gpu_memory_utilization", "0.9", "must be a number, is a str"),
        ("vllm_serve_enforce_eager", "yes", "must be true or false, is a str"),
        ("vllm_serve_extra_args", ["--x", 1], "must be a list of strings, is a list"),
        ("vllm_serve_extra_env", {"HF_TOKEN": {"nested": "x"}}, "must be a dictionary of names to strings, numbers or booleans, is a dict"),
        ("vllm_serve_spec_overrides", "{}", "must be a dictionary, is a str"),
        ("vllm_serve_expect", [], "must be a dictionary, is a list"),
    ],
)
def test_a_value_of_the_wrong_type_refuses_its_whole_section(name, value, why):
    tampered = record()
    tampered["current"][name] = value
    kept = checked_launch_record(tampered)
    assert kept["refused"] == [f"current.{name} ({why})"]
    assert kept["current"] == {}
    assert kept["previous"] == record()["previous"]


def test_a_section_that_lacks_an_input_is_refused():
    tampered = record()
    del tampered["previous"]["vllm_serve_image"]
    kept = checked_launch_record(tampered)
    assert (kept["refused"], kept["previous"], kept["current"]) == (["previous lacks vllm_serve_image"], {}, record()["current"])


def test_numbers_the_role_writes_pass():
    fine = record()
    fine["current"].update(vllm_serve_gpu_memory_utilization=1, vllm_serve_max_model_len=4096, vllm_serve_extra_env={"VLLM_CPU_KVCACHE_SPACE": 1})
    assert checked_launch_record(fine)["refused"] == []


@pytest.mark.parametrize(
    ("text", "why"),
    [("not json", "the record is not JSON"), ("[]", "the record is a list, not a dictionary"), ('{"current": "x"}', "current is a str, not a dictionary")],
)
def test_a_record_that_is_not_one_is_refused(text, why):
    assert checked_launch_record(text)["refused"] == [why]


def test_images_must_be_names():
    tampered = copy.deepcopy(record())
    tampered["images"] = "sparkinfer-lab-vllm:latest"
    kept = checked_launch_record(tampered)
    assert (kept["images"], kept["refused"]) == ([], ["images (must be a list of strings, is a str)"])
