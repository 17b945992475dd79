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

# The GPU query gb10_facts asks, in order, and its format: the query of a real GB10 output (a DGX Spark probe's,
# tests/unit/plugins/module_utils/fixtures/gb10/SOURCES.md), so that the module's test answers it with that output.
# gpu_name is nvidia-smi's alias of name. On GB10 memory.total prints "[N/A]": the GPU has no framebuffer of its own.
GPU_QUERY_FIELDS = (
    "index",
    "gpu_name",
    "pci.bus_id",
    "driver_version",
    "compute_cap",
    "temperature.gpu",
    "pstate",
    "memory.total",
)
GPU_QUERY_FORMAT = "csv,noheader,nounits"

_NOT_AVAILABLE = {"[N/A]", "N/A", "[Not Supported]", "Not Supported", ""}
_SMI_BANNER = re.compile(r"NVIDIA-SMI\s+(?P<smi>\S+)\s+Driver Version:\s+(?P<driver>\S+)\s+CUDA Version:\s+(?P<cuda>[0-9.]+|N/A)")
# /proc/driver/nvidia/version's first line: the open kernel modules say "Open Kernel Module for <arch>", the proprietary
# ones "<arch> Kernel Module" (fixtures/gb10/SOURCES.md).
_NVRM_LINE = re.compile(r"^NVRM version: NVIDIA UNIX (?:(?P<open>Open Kernel Module for \S+)|\S+ Kernel Module)\s+(?P<version>\d+\.\d+(?:\.\d+)?)\s", re.M)
# ASCII only: /proc/meminfo is ASCII, and digits of other scripts (Arabic-Indic, fullwidth) must not read as figures.
_MEMINFO_LINE = re.compile(r"^(?P<key>[A-Za-z_()0-9]+):\s+(?P<value>\d+)(?:\s+kB)?\s*$", re.ASCII)


class Gb10ParseError(ValueError):
    """Raised when a tool's output does not have the shape the parser knows."""


@dataclass(frozen=True)
class GpuRecord:
    index: int
    name: str
    pci_bus_id: str | None
    driver_version: str | None
    compute_cap: str | None
    temperature_c: int | None
    pstate: str | None
    memory_total_mib: int | None

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


def _number(raw: str | None, what: str) -> int | None:
    if raw is None:
        return None
    try:
        return int(float(raw))
    except (ValueError, OverflowError) as exc:  # "nan" and "inf" parse as floats but are no figure
        raise Gb10ParseError(f"{what} {raw!r} is not a number") from exc


def parse_gpu_query(text: str) -> list[GpuRecord]:
    """Parse what `nvidia-smi --query-gpu=<GPU_QUERY_FIELDS> --format=<GPU_QUERY_FORMAT>` printed: one row per GPU."""
    records = []
    for line in (line for line in text.splitlines() if line.strip()):
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) != len(GPU_QUERY_FIELDS):
            raise Gb10ParseError(f"nvidia-smi query row {line!r} has {len(cells)} fields, the query asks for {len(GPU_QUERY_FIELDS)}")
        row = dict(zip(GPU_QUERY_FIELDS, cells))
        # ASCII digits only: int() would also read other scripts' digits as an index.
        if not (row["index"].isascii() and row["index"].isdigit()):
            raise Gb10ParseError(f"nvidia-smi query row {line!r} has no numeric GPU index")
        records.append(
            GpuRecord(
                index=int(row["index"]),
                name=row["gpu_name"],
                pci_bus_id=_value(row["pci.bus_id"]),
                driver_version=_value(row["driver_version"]),
                compute_cap=_value(row["compute_cap"]),
                temperature_c=_number(_value(row["temperature.gpu"]), "GPU temperature"),
                pstate=_value(row["pstate"]),
                memory_total_mib=_number(_value(row["memory.total"]), "memory.total (MiB)"),
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


def parse_nvrm_version(text: str) -> tuple[str, str]:
    """("open" or "proprietary", the driver version) from /proc/driver/nvidia/version."""
    match = _NVRM_LINE.search(text)
    if match is None:
        raise Gb10ParseError("/proc/driver/nvidia/version has no 'NVRM version: NVIDIA UNIX ... Kernel Module VERSION' line")
    return ("open" if match.group("open") else "proprietary", match.group("version"))


def process_start_time(proc_stat: str, pid_stat: str, clock_ticks: int) -> float:
    """When a process started, in seconds since the epoch, from /proc/stat and the process's /proc/PID/stat.

    /proc/stat's btime is when the kernel booted; the 22nd field of /proc/PID/stat is when the process started, in clock
    ticks after it. gb10_facts reads init's (PID 1): when the node booted as its services see it, also on a node whose init
    is not the kernel's first process (a container run as a machine).
    """
    btime = re.search(r"^btime (\d+)$", proc_stat, re.M)
    if btime is None:
        raise Gb10ParseError("/proc/stat has no 'btime SECONDS' line")
    # The command's name, in parentheses, may hold spaces and parentheses: the fields after it follow its last ')'.
    fields = pid_stat.rpartition(")")[2].split()
    if len(fields) < 20 or not fields[19].isdigit():
        raise Gb10ParseError("the process's stat file has no start time (its 22nd field)")
    return int(btime.group(1)) + int(fields[19]) / clock_ticks


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
