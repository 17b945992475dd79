# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure parser for what nccl-tests (all_gather_perf, all_reduce_perf, ...) print, and its assessment.

No I/O here: callers pass the text the test printed (stdout and stderr, mpirun or not, with or
without NCCL_DEBUG=INFO lines interleaved). The result table is read from its own header line,
so the layouts of old (``redop``/``error`` columns) and new (``root``, ``#wrong``) nccl-tests
versions parse the same way.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_net import NcclNet, append_unique

# Two Sparks over one 200 GbE cable: 175 Gb/s busbw, NVIDIA spark_cluster_setup.py MIN_NCCL_TEST_BW.
SPARK_PAIR_MIN_BUSBW_GBPS = 21.875

_NOT_AVAILABLE = {"N/A", "n/a", "-"}
_MPI_TAG = re.compile(r"^\[\d+,\d+\]<std(?:out|err)>:")
_VERSION = re.compile(
    r"^#\s*nccl-tests version\s+(?P<version>\S+)(?:\s+\((?P<commit>[0-9a-f]+)\))?(?:\s+nccl-headers=\d+)?(?:\s+nccl-library=(?P<library>\d+))?"
)
_STARTING = re.compile(r"^#\s*Collective test starting:\s*(?P<test>\S+)")
_CONCLUDED = re.compile(r"^#\s*Collective test concluded:\s*(?P<test>\S+)")
_PARAMS_LINE = re.compile(r"\bnThread\s+\d+\s+nGpus\s+\d+")
_PARAM = re.compile(r"\b(?P<key>nThread|nGpus|minBytes|maxBytes|warmup iters|agg iters|iters|validation|graph|unalign)\s*:?\s+(?P<value>-?\d+)")
_STEP = re.compile(r"\bstep:\s*(?P<step>\S+)")
_DEVICE = re.compile(
    r"^#?\s*Rank\s+(?P<rank>\d+)\s+(?:Group\s+(?P<group>\d+)\s+)?Pid\s+(?P<pid>\d+)\s+on\s+(?P<host>\S+)\s+"
    r"device\s+(?P<device>\d+)\s+\[(?P<bus_id>[^\]]*)\]\s*(?P<name>.*?)\s*$"
)
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<value>\S+)")
_OUT_OF_BOUNDS = re.compile(r"^#\s*Out of bounds values\s*:\s*(?P<count>\d+)\s*(?P<verdict>\w+)?")
_ROW_START = re.compile(r"^\d+\s+\S")
_NCCL_VERSION = re.compile(r"\bNCCL version (?P<version>\S+)")
_WARN = re.compile(r"\bNCCL WARN\b")
_ERROR_LINE = re.compile(r"\bTest (?:NCCL |CUDA )?failure\b|\b(?:NCCL|CUDA) failure\b|\bmpirun noticed that\b|\bssh: connect to host\b|\bORTE was unable\b")

_MEASURE_COLUMNS = {"time": "time_us", "algbw": "algbw_gbps", "busbw": "busbw_gbps", "#wrong": "wrong", "wrong": "wrong", "error": "error"}
_DESCRIPTOR_COLUMNS = {"size": "size_bytes", "count": "count", "type": "type", "redop": "redop", "root": "root"}
# The header of today's layout, for rows pasted without theirs (a user's tail of the table). Taken only for a whole row
# of its cells (a paste cut mid-row claims no layout) whose third names a type as nccl-tests does (common.cu's
# test_typenames): a hand-made table with a label in front of each row shifts it.
_CURRENT_HEADER = "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong"
_CURRENT_CELLS = len(_CURRENT_HEADER.split()) - 1
_TYPE_NAMES = {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double", "bfloat16", "f8e4m3", "f8e5m2"}


class NcclTestsParseError(ValueError):
    """Raised when nccl-tests output has a result table the parser cannot read."""


@dataclass(frozen=True)
class Measure:
    """One half (out-of-place or in-place) of a result row; None where the cell is N/A or absent."""

    time_us: float | None = None
    algbw_gbps: float | None = None
    busbw_gbps: float | None = None
    wrong: int | None = None
    error: float | None = None


@dataclass(frozen=True)
class Row:
    size_bytes: int
    count: int | None
    type: str | None
    redop: str | None
    root: int | None
    out_of_place: Measure | None
    in_place: Measure | None

    def busbw_gbps(self) -> float | None:
        values = [half.busbw_gbps for half in (self.out_of_place, self.in_place) if half is not None and half.busbw_gbps is not None]
        return max(values) if values else None


@dataclass(frozen=True)
class Device:
    rank: int
    group: int | None
    pid: int
    host: str
    device: int
    bus_id: str
    name: str


@dataclass(frozen=True)
class NcclTestsResult:
    test: str | None = None
    concluded: bool = False
    tests_version: str | None = None
    nccl_library_version: str | None = None
    nccl_version: str | None = None
    parameters: dict = field(default_factory=dict)
    devices: list[Device] = field(default_factory=list)
    ranks: int = 0
    hosts: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    unparsed_rows: list[str] = field(default_factory=list)
    largest_size_bytes: int | None = None
    busbw_at_largest_gbps: float | None = None
    max_busbw_gbps: float | None = None
    avg_bus_bandwidth_gbps: float | None = None
    out_of_bounds: int | None = None
    out_of_bounds_ok: bool | None = None
    wrong_total: int | None = None
    max_error: float | None = None
    transport: str | None = None
    socket_fallback: bool = False
    networks: list[str] = field(default_factory=list)
    ib_hcas: list[dict] = field(default_factory=list)
    ib_no_device: bool = False
    oob_interfaces: list[dict] = field(default_factory=list)
    socket_interfaces: list[dict] = field(default_factory=list)
    channel_transports: list[str] = field(default_factory=list)
    nccl_warnings: list[str] = field(default_factory=list)
    error_lines: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class _Table:
    columns: list[str]
    descriptors: list[tuple[int, str]]
    groups: list[list[tuple[int, str]]]


def _library_version(code: str | None) -> str | None:
    # nccl-library=22809 is NCCL_VERSION_CODE: major * 10000 + minor * 100 + patch.
    if code is None:
        return None
    number = int(code)
    return f"{number // 10000}.{number // 100 % 100}.{number % 100}"


def _table(line: str) -> _Table:
    columns = line.lstrip("#").split()
    descriptors: list[tuple[int, str]] = []
    groups: list[list[tuple[int, str]]] = []
    for index, name in enumerate(columns):
        if name in _MEASURE_COLUMNS:
            key = _MEASURE_COLUMNS[name]
            if not groups or name == "time" or key in {known for _position, known in groups[-1]}:
                groups.append([])
            groups[-1].append((index, key))
        elif not groups and name in _DESCRIPTOR_COLUMNS:
            descriptors.append((index, _DESCRIPTOR_COLUMNS[name]))
    keys = {key for _position, key in descriptors} | {key for group in groups for _position, key in group}
    if "size_bytes" not in keys or "busbw_gbps" not in keys:
        raise NcclTestsParseError(f"the table header {line.strip()!r} has no size or busbw column")
    if len(groups) < 2:
        raise NcclTestsParseError(f"the table header {line.strip()!r} lacks the in-place half nccl-tests prints beside the out-of-place one")
    return _Table(columns=columns, descriptors=descriptors, groups=groups[:2])


def _number(raw: str, kind: type, column: str, line: str) -> float | int | None:
    if raw in _NOT_AVAILABLE:
        return None
    try:
        value = kind(raw)
    except ValueError as exc:
        raise NcclTestsParseError(f"result row {line.strip()!r}: {column} {raw!r} is not a number") from exc
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _row(table: _Table, cells: list[str], line: str) -> Row:
    described: dict = {}
    for index, key in table.descriptors:
        raw = cells[index]
        if key in {"size_bytes", "count", "root"}:
            described[key] = _number(raw, int, key, line)
        else:
            described[key] = None if raw in _NOT_AVAILABLE else raw
    halves = []
    for group in table.groups:
        values: dict[str, Any] = {key: _number(cells[index], int if key == "wrong" else float, key, line) for index, key in group}
        halves.append(Measure(**values))
    return Row(
        size_bytes=described["size_bytes"],
        count=described.get("count"),
        type=described.get("type"),
        redop=described.get("redop"),
        root=described.get("root"),
        out_of_place=halves[0],
        in_place=halves[1],
    )


@dataclass
class _Seen:
    """What the parser has read so far, line by line."""

    facts: dict = field(default_factory=lambda: {"parameters": {}})
    devices: list[Device] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    unparsed: list[str] = field(default_factory=list)
    table: _Table | None = None
    net: NcclNet = field(default_factory=NcclNet)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def nccl_line(self, line: str) -> None:
        """Read what NCCL itself printed: its version, warnings, network and channel transports."""
        if _WARN.search(line):
            append_unique(self.warnings, line)
        match = _NCCL_VERSION.search(line)
        if match and "nccl_version" not in self.facts:
            self.facts["nccl_version"] = match.group("version")
        self.net.read(line)

    def table_line(self, line: str) -> None:
        """Read a line of nccl-tests' own that is not NCCL's: header, parameters, devices, rows, summary."""
        if line.startswith("#"):
            if _read_comment(line, self.facts, self.devices):
                return
            body = line.lstrip("#").split()
            if body and body[0] == "size":
                if self.rows:
                    raise NcclTestsParseError("the output holds more than one result table: run one nccl-tests command at a time")
                self.table = _table(line)
            return
        if _PARAMS_LINE.search(line):
            _read_parameters(line, self.facts)
            return
        match = _DEVICE.match(line)
        if match:
            self.devices.append(_device(match))
            return
        if _ROW_START.match(line):
            cells = line.split()
            if self.table is None and len(cells) == _CURRENT_CELLS and cells[2] in _TYPE_NAMES:
                self.table = _table(_CURRENT_HEADER)
            if self.table is not None and len(cells) == len(self.table.columns):
                self.rows.append(_row(self.table, cells, line))
            else:
                append_unique(self.unparsed, line, cap=10)


def parse_nccl_tests(text: str) -> NcclTestsResult:
    """Parse the output of one nccl-tests run into its table, summary and the NCCL facts seen."""
    seen = _Seen()
    for raw_line in text.splitlines():
        line = _MPI_TAG.sub("", raw_line).strip()
        if not line:
            continue
        if "NCCL" in line or "Using network" in line or " via " in line:
            seen.nccl_line(line)
        if _ERROR_LINE.search(line):
            append_unique(seen.errors, line)
        seen.table_line(line)
    return _result(seen)


def _device(match: re.Match) -> Device:
    group = match.group("group")
    return Device(
        rank=int(match.group("rank")),
        group=None if group is None else int(group),
        pid=int(match.group("pid")),
        host=match.group("host"),
        device=int(match.group("device")),
        bus_id=match.group("bus_id"),
        name=match.group("name"),
    )


def _read_parameters(line: str, facts: dict) -> None:
    names = {"nThread": "nthread", "nGpus": "ngpus", "minBytes": "min_bytes", "maxBytes": "max_bytes", "warmup iters": "warmup_iters", "agg iters": "agg_iters"}
    for match in _PARAM.finditer(line):
        facts["parameters"][names.get(match.group("key"), match.group("key"))] = int(match.group("value"))
    step = _STEP.search(line)
    if step:
        facts["parameters"]["step"] = step.group("step")


def _read_comment(line: str, facts: dict, devices: list[Device]) -> bool:
    """Read a '#' line of nccl-tests' own; True when it was one of the known ones."""
    match = _VERSION.match(line)
    if match:
        facts["tests_version"] = match.group("version")
        facts["nccl_library_version"] = _library_version(match.group("library"))
        return True
    match = _STARTING.match(line)
    if match:
        facts["test"] = match.group("test")
        return True
    match = _CONCLUDED.match(line)
    if match:
        facts["concluded"] = True
        facts.setdefault("test", match.group("test"))
        return True
    match = _AVG.match(line)
    if match:
        try:
            value = float(match.group("value"))
        except ValueError as exc:
            raise NcclTestsParseError(f"'# Avg bus bandwidth' value {match.group('value')!r} is not a number") from exc
        facts["avg_bus_bandwidth_gbps"] = value if math.isfinite(value) else None
        return True
    match = _OUT_OF_BOUNDS.match(line)
    if match:
        facts["out_of_bounds"] = int(match.group("count"))
        verdict = match.group("verdict")
        facts["out_of_bounds_ok"] = None if verdict is None else verdict.upper() == "OK"
        return True
    if _PARAMS_LINE.search(line):
        _read_parameters(line, facts)
        return True
    match = _DEVICE.match(line)
    if match:
        devices.append(_device(match))
        return True
    return False


def _result(seen: _Seen) -> NcclTestsResult:
    rows, facts = seen.rows, seen.facts
    largest = max((row.size_bytes for row in rows), default=None)
    at_largest = [bw for row in rows if row.size_bytes == largest for bw in [row.busbw_gbps()] if bw is not None]
    every_busbw = [bw for row in rows for bw in [row.busbw_gbps()] if bw is not None]
    halves = [half for row in rows for half in (row.out_of_place, row.in_place) if half is not None]
    wrong = [half.wrong for half in halves if half.wrong is not None]
    error = [half.error for half in halves if half.error is not None]
    hosts: list[str] = []
    for device in seen.devices:
        append_unique(hosts, device.host, cap=len(seen.devices))
    net = seen.net
    transport = net.transport()
    return NcclTestsResult(
        test=facts.get("test"),
        concluded=facts.get("concluded", False),
        tests_version=facts.get("tests_version"),
        nccl_library_version=facts.get("nccl_library_version"),
        nccl_version=facts.get("nccl_version"),
        parameters=facts["parameters"],
        devices=seen.devices,
        ranks=len(seen.devices),
        hosts=hosts,
        columns=[] if seen.table is None else seen.table.columns,
        rows=rows,
        unparsed_rows=seen.unparsed,
        largest_size_bytes=largest,
        busbw_at_largest_gbps=max(at_largest) if at_largest else None,
        max_busbw_gbps=max(every_busbw) if every_busbw else None,
        avg_bus_bandwidth_gbps=facts.get("avg_bus_bandwidth_gbps"),
        out_of_bounds=facts.get("out_of_bounds"),
        out_of_bounds_ok=facts.get("out_of_bounds_ok"),
        wrong_total=sum(wrong) if wrong else None,
        max_error=max(error) if error else None,
        transport=transport,
        socket_fallback=transport == "NET/Socket",
        networks=net.networks,
        ib_hcas=net.hcas,
        ib_no_device=net.ib_no_device,
        oob_interfaces=net.oob,
        socket_interfaces=net.sockets,
        channel_transports=sorted(net.net_channels + net.other_channels),
        nccl_warnings=seen.warnings,
        error_lines=seen.errors,
    )


def human_size(size_bytes: int) -> str:
    """16 GiB, 512 MiB, 8 KiB or bytes, the way nccl-tests' -b/-e take them."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size_bytes >= scale and size_bytes % scale == 0:
            return f"{size_bytes // scale} {unit}"
    return f"{size_bytes} bytes"


def _below_threshold(busbw: float, largest: int, floor: float, transport: str | None) -> str:
    spark_floor = " (the floor for two Sparks over one 200 GbE cable: 175 Gb/s, NVIDIA spark_cluster_setup.py MIN_NCCL_TEST_BW)"
    message = f"bus bandwidth {busbw:.2f} GB/s at {human_size(largest)} is below {floor:g} GB/s{spark_floor if floor == SPARK_PAIR_MIN_BUSBW_GBPS else ''}. "
    if busbw < 5:
        message += "About 3 GB/s on a Spark pair means the wrong HCA or an NCCL build that is not a release tag. "
    elif busbw < floor * 0.7:
        message += "About half the link: most likely only one twin of the cabled port is in NCCL_IB_HCA. "
    else:
        message += "Just under the floor: most likely MTU 1500 on one end of the link. "
    if transport is None:
        message += (
            "The output does not say which transport NCCL used: rerun with -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET and look for "
            "NET/IB (RoCE) or NET/Socket (TCP, a fraction of the link). "
        )
    message += (
        "Typical causes: MTU 1500 on either node (18.94-20.95 GB/s measured at MTU 1500, dgx-spark-playbooks#25: set mtu 9000 on both twins "
        "of both nodes); only one twin in NCCL_IB_HCA (about half the bandwidth: list both, e.g. NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1, "
        "dgx-spark-playbooks#102); about 3 GB/s = the wrong HCA or NCCL build (3.04 GB/s from a dev-branch NCCL against 23.74 GB/s from "
        "tag v2.28.9-1, dgx-spark-playbooks PR#103)."
    )
    if largest < 1 << 30:
        message += f" The largest buffer was only {human_size(largest)}: the floor is defined for all_gather_perf -b 16G -e 16G -f 2."
    return message


def assess(
    result: NcclTestsResult,
    *,
    min_busbw_gbps: float = SPARK_PAIR_MIN_BUSBW_GBPS,
    allow_socket_transport: bool = False,
    rc: int | None = 0,
    timed_out: bool = False,
    timeout_s: float | None = None,
) -> list[str]:
    """What is wrong with a run, each with its likely cause and fix; empty when it passes."""
    what = result.test or "the nccl-tests command"
    last_warning = f" Last NCCL warning: {result.nccl_warnings[-1]}" if result.nccl_warnings else ""
    problems = []
    if timed_out:
        problems.append(
            f"{what} did not finish within {timeout_s or 0:g} s and was killed. A run that hangs is most often a hung NCCL init: the ranks cannot "
            "reach each other on the bootstrap interface (NCCL_SOCKET_IFNAME, and mpirun's --mca btl_tcp_if_include/oob_tcp_if_include), "
            "NCCL_IB_HCA names an HCA that is down or not cabled (compare ibdev2netdev on both nodes), or a firewall drops the TCP ports NCCL "
            "and MPI open between the nodes. Rerun with -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET and read the last NET/ line."
            + (f" It printed {len(result.rows)} result row(s) before it was killed." if result.rows else "")
            + last_warning
        )
    elif rc:
        problems.append(
            f"{what} exited with rc={rc}"
            + (f": {result.error_lines[0]}" if result.error_lines else "")
            + (
                " (killed by SIGKILL: on a Spark's unified memory a 16 GiB buffer takes about 32 GB per node and can exhaust it, "
                "dgx-spark-playbooks#102; try -b 4G -e 4G)"
                if rc in (137, -9)
                else ""
            )
            + "."
            + last_warning
        )
    if result.out_of_bounds or result.out_of_bounds_ok is False:
        problems.append(
            f"nccl-tests counted {result.out_of_bounds} out-of-bounds value(s): the collective returned wrong data. Suspect the NCCL build "
            "(build a release tag such as v2.28.9-1 with NVCC_GENCODE=-gencode=arch=compute_121,code=sm_121) or different NCCL libraries on the nodes."
        )
    if result.wrong_total:
        problems.append(
            f"the result table counts {result.wrong_total} wrong value(s) (#wrong): the collective returned wrong data. Suspect the NCCL build "
            "or different NCCL libraries on the nodes, then the link (RoCE errors in /sys/class/infiniband/<hca>/ports/1/counters)."
        )
    if result.socket_fallback and not allow_socket_transport:
        interfaces = ", ".join(iface["interface"] for iface in result.socket_interfaces)
        problems.append(
            f"NCCL moved the data over TCP sockets (NET/Socket{' on ' + interfaces if interfaces else ''}) instead of RoCE: a fraction of the "
            "ConnectX-7's bandwidth. "
            + (
                "NCCL found no RDMA device (NET/IB : No device found): in a container pass --device /dev/infiniband and --ulimit memlock=-1. "
                if result.ib_no_device
                else ""
            )
            + "Set NCCL_IB_DISABLE=0 and NCCL_IB_HCA to both twins of the cabled port (e.g. rocep1s0f1,roceP2p1s0f1), or set "
            "allow_socket_transport where no RDMA link exists."
        )
    if not result.rows and not timed_out and not rc:
        problems.append(
            f"{what} printed no result rows: this is not the output of a complete nccl-tests run"
            + (f" (it stops at {result.unparsed_rows[-1]!r})" if result.unparsed_rows else "")
            + "."
        )
    busbw, largest = result.busbw_at_largest_gbps, result.largest_size_bytes
    if min_busbw_gbps > 0 and busbw is not None and largest is not None and busbw < min_busbw_gbps:
        problems.append(_below_threshold(busbw, largest, min_busbw_gbps, result.transport))
    return problems
