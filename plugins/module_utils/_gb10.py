# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parsers for the host facts of an NVIDIA DGX Spark (GB10): nvidia-smi, /proc/meminfo, disk space.

No I/O here: callers pass the text a command printed or a file held, or the filesystem probe to use.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass

# The --query-gpu fields gb10_facts asks for, in order. On GB10 the memory fields print
# "[N/A]" because the GPU has no framebuffer of its own (unified memory).
GPU_QUERY_FIELDS = (
    "index",
    "name",
    "uuid",
    "pci.bus_id",
    "compute_cap",
    "driver_version",
    "memory.total",
    "memory.used",
)

_NOT_AVAILABLE = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""}
_HEADER_UNIT = re.compile(r"\s*\[[^\]]*\]$")
_SMI_BANNER = re.compile(r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s+(?P<driver>\S+)\s+CUDA Version:\s+(?P<cuda>[0-9.]+|N/A)")
# ASCII only: /proc/meminfo is ASCII, and digits of other scripts (Arabic-Indic, fullwidth) must not read as figures.
_MEMINFO_LINE = re.compile(r"^(?P<key>[A-Za-z_()0-9]+):\s+(?P<value>\d+)(?:\s+kB)?\s*$", re.ASCII)


class Gb10ParseError(ValueError):
    """Raised when a tool's output does not have the shape the parser knows."""


@dataclass(frozen=True)
class GpuRecord:
    index: int
    name: str
    uuid: str | None
    pci_bus_id: str | None
    compute_cap: str | None
    driver_version: str | None
    memory_total_mib: int | None
    memory_used_mib: int | None

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SmiBanner:
    nvidia_smi_version: str
    driver_version: str
    cuda_version: str | None

    def as_dict(self) -> dict:
        return asdict(self)


def _value(raw: str) -> str | None:
    raw = raw.strip()
    return None if raw in _NOT_AVAILABLE else raw


def _mib(raw: str | None) -> int | None:
    if raw is None:
        return None
    number = raw.split()[0]
    try:
        return int(float(number))
    except (ValueError, OverflowError) as exc:  # "nan" and "inf" parse as floats but are no number of MiB
        raise Gb10ParseError(f"memory value {raw!r} is not a number of MiB") from exc


def parse_gpu_query_csv(text: str) -> list[GpuRecord]:
    """Parse `nvidia-smi --query-gpu=FIELDS --format=csv` (header line included) for any FIELDS with name."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return []
    header = [_HEADER_UNIT.sub("", column).strip() for column in lines[0].split(",")]
    if "name" not in header:
        raise Gb10ParseError(f"nvidia-smi CSV header {lines[0]!r} lacks name")
    records = []
    for position, line in enumerate(lines[1:]):
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(header):
            raise Gb10ParseError(f"nvidia-smi CSV row {line!r} has {len(cells)} fields, the header has {len(header)}")
        row = dict(zip(header, cells))
        try:
            # Without an index column, rows come in GPU index order.
            index = int(row.get("index", position))
        except ValueError as exc:
            raise Gb10ParseError(f"nvidia-smi CSV row {line!r} has no numeric GPU index") from exc
        records.append(
            GpuRecord(
                index=index,
                name=row["name"],
                uuid=_value(row.get("uuid", "")),
                pci_bus_id=_value(row.get("pci.bus_id", "")),
                compute_cap=_value(row.get("compute_cap", "")),
                driver_version=_value(row.get("driver_version", "")),
                memory_total_mib=_mib(_value(row.get("memory.total", ""))),
                memory_used_mib=_mib(_value(row.get("memory.used", ""))),
            )
        )
    return records


def parse_smi_banner(text: str) -> SmiBanner:
    """Read the versions from the banner of plain `nvidia-smi` output."""
    match = _SMI_BANNER.search(text)
    if match is None:
        raise Gb10ParseError("nvidia-smi output has no 'NVIDIA-SMI ... Driver Version: ... CUDA Version: ...' banner")
    cuda = match.group("cuda")
    return SmiBanner(
        nvidia_smi_version=match.group("smi"),
        driver_version=match.group("driver"),
        cuda_version=None if cuda == "N/A" else cuda,
    )


def parse_meminfo(text: str) -> dict[str, int]:
    """Parse /proc/meminfo into {field: value}; values in kB stay in KiB as the kernel prints them."""
    values = {}
    for line in text.splitlines():
        match = _MEMINFO_LINE.match(line)
        if match:
            values[match.group("key")] = int(match.group("value"))
    for required in ("MemTotal", "MemFree", "MemAvailable", "Cached"):
        if required not in values:
            raise Gb10ParseError(f"/proc/meminfo has no {required} line")
    return values


def driver_branch(driver_version: str | None) -> str | None:
    """The driver branch is its major version: 580.95.05 -> 580."""
    if not driver_version:
        return None
    return driver_version.split(".", 1)[0]


def nearest_existing_path(path: str, exists: Callable[[str], bool]) -> str:
    """The path itself if exists() holds for it, else its closest ancestor that exists ("/" at worst).

    A model directory is checked for free space before the role creates it: the filesystem that
    will hold it is the one of its nearest existing ancestor.
    """
    if not path.startswith("/"):
        raise Gb10ParseError(f"path {path!r} is not absolute")
    candidate = posixpath.normpath(path)
    while candidate != "/" and not exists(candidate):
        candidate = posixpath.dirname(candidate)
    return candidate


def disk_space(block_size: int, blocks: int, blocks_available: int) -> tuple[int, int]:
    """(free, total) bytes from statvfs fields f_frsize, f_blocks and f_bavail.

    f_bavail, not f_bfree: the blocks reserved for root are not there for the model files.
    """
    return blocks_available * block_size, blocks * block_size
