# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""A container's environment, declared by a role as layers of variables (its vars/main.yml), merged in order: a later
layer's variable wins over an earlier one's. No I/O here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class EnvLayerError(ValueError):
    """A layer that is no mapping of variables (its position in the message, never a value: they may be secrets)."""


def merged_env(layers: Any) -> dict[str, Any]:
    """The variables of the layers, each {env: {NAME: value}, wanted: bool (default true)}; a layer not wanted is left
    out before its variables are read."""
    if not isinstance(layers, list):
        raise EnvLayerError(f"the layers must be a list, got {type(layers).__name__}")
    merged: dict[str, Any] = {}
    for position, layer in enumerate(layers, start=1):
        if not isinstance(layer, Mapping):
            raise EnvLayerError(f"layer {position} must be a mapping with its env, got {type(layer).__name__}")
        if not layer.get("wanted", True):
            continue
        env = layer.get("env")
        if not isinstance(env, Mapping) or not all(isinstance(name, str) for name in env):
            raise EnvLayerError(f"layer {position}'s env must map variable names to values, got {type(env).__name__}")
        merged.update(env)
    return merged
