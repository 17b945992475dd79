# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A node's record of what shaped its launches (vllm_serve's /etc/sparkinfer/CONTAINER.inputs.json), read as data.

A rollout sets a cluster's variables back from this record (playbooks/rollout.yml). The record lives on a node, and
root on that node can write anything in it: a key ``ansible_connection: local`` set as a variable would run the admin
run's next tasks on the admin box. So no name is ever taken from the record: LAUNCH_INPUTS below is the only list of
what a record may hold, each with the shape the role's argument specification gives it, and anything else in the
record (an unknown name, a wrong type, a missing input) is refused, named, and dropped.

No I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fraction(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _switch(value: Any) -> bool:
    return isinstance(value, bool)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _mapping(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(key, str) for key in value)


def _environment(value: Any) -> bool:
    return _mapping(value) and all(isinstance(item, (str, int, float, bool)) for item in value.values())


# Each input the role writes (roles/vllm_serve/vars/main.yml, __vllm_serve_inputs: a unit test keeps the two the same),
# with the check of its value and the words that name the shape. None is allowed for each: an unset input.
LAUNCH_INPUTS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "vllm_serve_image": (_text, "a string"),
    "vllm_serve_recipe": (_text, "a string"),
    "vllm_serve_model": (_text, "a string"),
    "vllm_serve_served_model_name": (_text, "a string"),
    "vllm_serve_executor": (lambda value: value in ("mp", "ray"), "mp or ray"),
    "vllm_serve_tensor_parallel_size": (_whole, "a whole number"),
    "vllm_serve_pipeline_parallel_size": (_whole, "a whole number"),
    "vllm_serve_gpus_per_node": (_whole, "a whole number"),
    "vllm_serve_max_model_len": (_whole, "a whole number"),
    "vllm_serve_gpu_memory_utilization": (_fraction, "a number"),
    "vllm_serve_kv_cache_dtype": (_text, "a string"),
    "vllm_serve_enforce_eager": (_switch, "true or false"),
    "vllm_serve_extra_args": (_texts, "a list of strings"),
    "vllm_serve_spec_overrides": (_mapping, "a dictionary"),
    "vllm_serve_extra_env": (_environment, "a dictionary of names to strings, numbers or booleans"),
    "vllm_serve_env_profile": (_text, "a string"),
    "vllm_serve_expect": (_mapping, "a dictionary"),
}

# The record's own keys (roles/vllm_serve/tasks/gate.yml writes them): image_ids holds the ID each section's image name
# stood for when its launch passed the gate, so that a rollback serves that build even after the tag moved.
_SECTIONS = ("current", "previous")
_IMAGES = "images"
_IMAGE_IDS = "image_ids"
_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")


_EMPTY: dict[str, Any] = {"current": {}, "previous": {}, "images": [], "image_ids": {"current": "", "previous": ""}}


def _shape_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _checked_inputs(section: str, given: Any, refused: list[str]) -> dict[str, Any]:
    """The known inputs of one section, each of its shape; every other key, wrong value or missing input in refused."""
    if not isinstance(given, Mapping):
        refused.append(f"{section} is a {_shape_of(given)}, not a dictionary")
        return {}
    if not given:
        return {}
    checked = {}
    for name, value in given.items():
        known = LAUNCH_INPUTS.get(name) if isinstance(name, str) else None
        if known is None:
            refused.append(f"{section}.{name} (not an input the collection writes)")
        elif value is not None and not known[0](value):
            refused.append(f"{section}.{name} (must be {known[1]}, is a {_shape_of(value)})")
        else:
            checked[name] = value
    missing = [name for name in LAUNCH_INPUTS if name not in given]
    if missing:
        refused.append(f"{section} lacks {', '.join(missing)}")
        return {}
    return checked if len(checked) == len(LAUNCH_INPUTS) else {}


def checked_launch_record(record: Any) -> dict[str, Any]:
    """The record (its JSON text, or as decoded) as the role wrote it, and nothing else:
    {current, previous, images, image_ids, refused}.

    current and previous hold every input of LAUNCH_INPUTS, each of its shape, or are {} (none kept, or refused);
    images is the list of image names served, newest first; image_ids the ID of each section's image when its launch
    passed the gate ('' where unknown). refused names each thing left out and why, without its value
    (vllm_serve_extra_env may hold a token): a caller that sets variables from the record refuses to go on.
    """
    refused: list[str] = []
    if isinstance(record, str):
        try:
            record = json.loads(record) if record.strip() else {}
        except ValueError:
            return {**_EMPTY, "refused": ["the record is not JSON"]}
    if record is None or record == {}:
        return {**_EMPTY, "refused": refused}
    if not isinstance(record, Mapping):
        return {**_EMPTY, "refused": [f"the record is a {_shape_of(record)}, not a dictionary"]}
    for key in record:
        if key not in (*_SECTIONS, _IMAGES, _IMAGE_IDS):
            refused.append(f"{key} (not a part of the record the collection writes)")
    sections = {section: _checked_inputs(section, record.get(section, {}), refused) for section in _SECTIONS}
    images = record.get(_IMAGES, [])
    if not _texts(images):
        refused.append(f"images (must be a list of strings, is a {_shape_of(images)})")
        images = []
    return {**sections, "images": list(images), "image_ids": _checked_image_ids(record.get(_IMAGE_IDS, {}), refused), "refused": refused}


def _checked_image_ids(given: Any, refused: list[str]) -> dict[str, str]:
    """Each section's image ID ('' where the record has none: written before the IDs were kept)."""
    if not isinstance(given, Mapping):
        refused.append(f"image_ids is a {_shape_of(given)}, not a dictionary")
        given = {}
    ids = {}
    for key, value in given.items():
        if key not in _SECTIONS:
            refused.append(f"image_ids.{key} (not a part of the record the collection writes)")
        elif not (isinstance(value, str) and (value == "" or _IMAGE_ID.fullmatch(value))):
            refused.append(f"image_ids.{key} (must be an image ID, sha256: and 64 hexadecimal digits)")
        else:
            ids[key] = value
    return {section: ids.get(section, "") for section in _SECTIONS}
