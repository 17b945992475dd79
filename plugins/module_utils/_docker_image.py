# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Image identity across Docker engines that copy an image with `docker save | docker load`, and the save's platform.

An image's `Id` is not the same on both ends of a copy once an engine uses the containerd image store: there it is
the digest of the index or manifest the tag points to, on the classic store the config's digest, and
`docker save --platform` hands the other engine the platform's manifest instead of the index. What every engine
reports alike after any such copy is the image's platform, config and uncompressed layer digests
(captured on Docker 28.5.2 with both stores, tests/unit/plugins/module_utils/fixtures/docker_image/SOURCES.md). The
fingerprint is a digest of those.

No I/O here: callers pass what `docker image inspect` (or community.docker.docker_image_info) returned.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Mapping

# The image config's fields (the OCI image spec's `config`): Docker's inspect adds container-only fields with empty
# values on some versions, which say nothing about the image.
CONFIG_FIELDS = ("User", "ExposedPorts", "Env", "Entrypoint", "Cmd", "Volumes", "WorkingDir", "Labels", "StopSignal", "ArgsEscaped")
# `docker save --platform` came with Docker 28.0 (Engine API 1.48).
SAVE_PLATFORM_SINCE_MAJOR = 28


# Platform spellings that name the same platform, as containerd's platforms package normalizes them (normalizeArch in
# containerd/platforms database.go, vendored by moby/moby at vendor/github.com/containerd/platforms/database.go @
# 0aa8fe0bf949cbccab74414cb091728854be0d7d): arm64's v8 is its default variant, which one engine reports and another
# leaves out; amd64's v1 likewise.
_ARCHITECTURE_ALIASES = {"aarch64": "arm64", "x86_64": "amd64", "x86-64": "amd64"}
_DEFAULT_VARIANTS = {"arm64": ("8", "v8", "v8.0"), "amd64": ("v1",)}


class DockerImageError(ValueError):
    """An inspect result the fingerprint cannot be made from (named in the message)."""


def image_fingerprint(inspect: Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the image's platform, config and layers: equal on every engine that holds it."""
    if not isinstance(inspect, Mapping):
        raise DockerImageError(f"an image inspect result must be a dictionary, got {type(inspect).__name__}")
    layers = (inspect.get("RootFS") or {}).get("Layers")
    if not isinstance(layers, list) or not layers or not inspect.get("Architecture"):
        raise DockerImageError(f"the inspect result of {inspect.get('Id', 'an image')} has no RootFS.Layers or Architecture")
    config = inspect.get("Config") or {}
    architecture, variant = normal_platform(inspect.get("Architecture"), inspect.get("Variant"))
    identity = {
        "os": inspect.get("Os"),
        "architecture": architecture,
        "variant": variant,
        "config": {field: config[field] for field in CONFIG_FIELDS if config.get(field)},
        "layers": layers,
    }
    return "sha256:" + hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def normal_platform(architecture: object, variant: object) -> tuple[str, str | None]:
    """(architecture, variant) as every engine means them: ("arm64", "v8") and ("arm64", None) are one platform."""
    architecture = str(architecture).lower()
    architecture = _ARCHITECTURE_ALIASES.get(architecture, architecture)
    variant = str(variant).lower() if variant else None
    if variant in _DEFAULT_VARIANTS.get(architecture, ()):
        variant = None
    return architecture, variant


def save_platform(image_store: str | None, server_version: str | None, inspect: Mapping[str, Any]) -> str:
    """The ``--platform`` to save the image with (``os/arch[/variant]``), or '' to save it whole.

    On the containerd store a multi-platform image saved whole needs every platform's content, which a pull of one
    platform does not fetch, so only the image's platform for this host goes; the classic store holds one platform
    and its engines before 28 have no such option.
    """
    if image_store != "containerd" or not _major_at_least(server_version, SAVE_PLATFORM_SINCE_MAJOR):
        return ""
    parts = [inspect.get("Os"), inspect.get("Architecture"), inspect.get("Variant")]
    if not parts[0] or not parts[1]:
        raise DockerImageError(f"the inspect result of {inspect.get('Id', 'an image')} names no Os or Architecture to save it for")
    return "/".join(str(part) for part in parts if part)


def _major_at_least(version: str | None, major: int) -> bool:
    match = re.match(r"(\d+)\.", version or "")
    return match is not None and int(match.group(1)) >= major
