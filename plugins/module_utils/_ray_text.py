# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What Ray's parsers share: their error, and figures as Ray prints them (finite, memory in bytes)."""

from __future__ import annotations

import math
import re
from typing import Any

MEMORY_RESOURCES = ("memory", "object_store_memory")
# How Ray prints a boolean in its tables and reports (Python's str of a bool).
PYTHON_BOOL = {"True": True, "False": False}
NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"

_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
_QUANTITY = re.compile(rf"^(?P<number>{NUMBER})\s*(?P<unit>B|KiB|MiB|GiB|TiB)?$")


class RayStatusParseError(ValueError):
    """Raised when the text is not a Ray report or node list the parser can read."""


def _to_bytes(number: float, unit: str | None) -> int:
    return round(number * _UNITS[unit or "B"])


def parse_quantity(text: str, resource: str = "", unit: str | None = None) -> float:
    """A figure as Ray prints it (``2.0``, ``0B``, ``16.07GiB``, ``16.071 GiB``, or a number with
    its ``unit`` apart): a figure with a unit, and any figure of a memory resource, in bytes."""
    match = _QUANTITY.match(text.strip())
    if match is None:
        raise RayStatusParseError(f"not a resource quantity: {text!r}")
    number = float(match["number"])
    if not math.isfinite(number):  # "1e400" matches the pattern and reads as infinity
        raise RayStatusParseError(f"not a finite resource quantity: {text!r}")
    suffix = match["unit"] or unit
    if suffix is not None:
        return _to_bytes(number, suffix)
    if resource in MEMORY_RESOURCES:
        return round(number)
    return number


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def finite(value: float, what: str) -> float:
    try:
        number = float(value)
    except OverflowError:  # an int too large for a float
        number = math.inf
    if not math.isfinite(number):
        raise RayStatusParseError(f"{what} is not a finite number: {str(value)[:40]}")
    return number
