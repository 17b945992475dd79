# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""An image's identity that survives `docker save | docker load` between engines, and the platform to save it for."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._docker_image import DockerImageError, image_fingerprint, save_platform


def docker_image_fingerprint(inspect):
    """``sha256:<hex>`` of an image's platform, config and layers, from its inspect result."""
    try:
        return image_fingerprint(inspect)
    except DockerImageError as exc:
        raise AnsibleFilterError(f"docker_image_fingerprint: {exc}") from exc


def docker_save_platform(inspect, image_store, server_version):
    """The ``--platform`` value to save the image with on this engine, or '' to save it whole."""
    try:
        return save_platform(image_store, server_version, inspect)
    except DockerImageError as exc:
        raise AnsibleFilterError(f"docker_save_platform: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"docker_image_fingerprint": docker_image_fingerprint, "docker_save_platform": docker_save_platform}
