# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a value pins an image as vllm_image_info checks it: a registry digest, a vLLM release as a minimum.

The roles' preflight refuses a wrong value by its variable's name with these, before any node changes; the module and
the recipe checker use the same patterns.
"""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_image import DIGEST_PATTERN, RELEASE_PATTERN


def registry_digest(value):
    """True for ``sha256:`` and 64 lower-case hexadecimal digits, as a registry and RepoDigests give a digest."""
    return isinstance(value, str) and DIGEST_PATTERN.match(value) is not None


def vllm_release(value):
    """True for a release as a minimum vLLM is given: ``0.17`` or ``0.17.0``."""
    return isinstance(value, str) and RELEASE_PATTERN.match(value) is not None


class TestModule:
    def tests(self):
        return {"registry_digest": registry_digest, "vllm_release": vllm_release}
