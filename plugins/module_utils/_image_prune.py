# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Which of the images a node served before go once a change serves everywhere (roles/vllm_serve/tasks/prune_images.yml).

The record of the launches lists the images served, newest first: names, and the IDs a rollback served after a name moved
on. Docker refuses to remove an image a container uses (by whatever name it was started), and removing an ID takes every
name the build still has with it, which may be the user's. So an entry beyond the newest kept is removed only where that
takes nothing a container uses and no name of anyone's; one whose image is gone is forgotten. No I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

_IMAGE_ID = re.compile(r"sha256:[0-9a-f]{64}")


def _reference(entry: str) -> str:
    """A name as Docker lists it: with its tag, `latest` where none is given. (A name by digest is never found among the
    names, so its image is forgotten, never removed.)"""
    return entry if ":" in entry.rsplit("/", 1)[-1] else f"{entry}:latest"


def _image_of(entry: str, held: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    if _IMAGE_ID.fullmatch(entry):
        return next((image for image in held if image.get("Id") == entry), None)
    return next((image for image in held if _reference(entry) in _names(image)), None)


def _names(image: Mapping[str, Any]) -> list[str]:
    return list(image.get("RepoTags") or [])


def _why_kept(entry: str, image: Mapping[str, Any], containers: Sequence[Mapping[str, Any]]) -> str:
    """Why an old entry must stay, or '' when removing it takes nothing of anyone's."""
    by_name = [container for container in containers if container.get("Image") in (entry, _reference(entry))]
    by_build = [container for container in containers if container.get("ImageID") == image.get("Id")]
    if _IMAGE_ID.fullmatch(entry):
        if by_build:
            return "a container uses it"
        if _names(image):
            return f"it is still named {', '.join(_names(image))}"
        return ""
    if by_name:
        return "a container uses it"
    # Docker refuses to remove the last name of a build a container uses.
    if by_build and _names(image) == [_reference(entry)]:
        return "a container uses it"
    return ""


def images_to_prune(images: Sequence[str], keep: int, containers: Sequence[Mapping[str, Any]], held: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What to remove of the record's images and what the record keeps.

    images is the record's list, newest first; keep is vllm_serve_keep_images (the newest and that many before it stay);
    containers are Docker's containers (each with Image, the name it was started by, and ImageID); held is what Docker
    holds of the entries beyond those (docker_image_info: Id, RepoTags, RepoDigests). Returns remove (entries to
    remove, oldest last), images (the record's list after) and kept (each older entry that stays, with why)."""
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        raise ValueError(f"vllm_serve_keep_images must be a whole number of 0 or more, got {keep!r}")
    newest, older = list(images[: 1 + keep]), list(images[1 + keep :])
    remove: list[str] = []
    kept: dict[str, str] = {}
    for entry in older:
        image = _image_of(entry, held)
        if image is None:
            continue
        why = _why_kept(entry, image, containers)
        if why:
            kept[entry] = why
        else:
            remove.append(entry)
    return {"remove": remove, "images": newest + [entry for entry in older if entry in kept], "kept": kept}
