#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: nccl_perf
short_description: Run an nccl-tests bandwidth test (or read its output) and gate on bus bandwidth and transport
version_added: 0.1.0
description:
  - Runs an nccl-tests command such as C(mpirun ... all_gather_perf -b 16G -e 16G -f 2) with a hard
    timeout, or reads the output of one that already ran, and returns the result table, C(# Avg bus bandwidth),
    the out-of-bounds count, the devices and ranks, and the NCCL transport seen in C(NCCL_DEBUG=INFO) lines
    (C(NET/IB) with its HCAs, or the C(NET/Socket) TCP fallback) with any C(NCCL WARN) lines.
  - Fails with the likely cause and the fix when the command times out or fails, when values are wrong
    or out of bounds, when NCCL fell back to TCP sockets, or when the bus bandwidth at the largest buffer
    is under O(min_busbw_gbps).
  - Old (C(redop), C(error) columns) and new (C(root), C(#wrong) columns) nccl-tests layouts are read
    from the table's own header line. Rows pasted without their header (a tail of the table) are read in
    today's layout when they have its 13 cells and name a type where it has one; other rows are kept in
    C(unparsed_rows).
  - "A measurement: it never changes the hosts, so C(changed) is always false."
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
attributes:
  check_mode:
    support: none
    details:
      - The module runs a benchmark; Ansible skips it in check mode rather than report a made-up number.
  diff_mode:
    support: N/A
    details:
      - This action does not modify state.
options:
  argv:
    description:
      - The nccl-tests command to run, as an argument vector (no shell), for example
        C([mpirun, -np, "2", -H, "spark-1:1,spark-2:1", -x, NCCL_IB_HCA, all_gather_perf, -b, 16G, -e, 16G, -f, "2"]).
      - It runs under C(timeout(1)) from coreutils, which kills the whole process group at O(timeout).
    type: list
    elements: str
  output:
    description:
      - The text an nccl-tests run printed (stdout and stderr), parsed instead of running a command.
    type: str
  environment:
    description:
      - Variables added to the command's environment (values are turned into strings); C(LC_ALL=C) is always set.
      - They reach the local process only; with C(mpirun), forward each to the remote ranks with C(-x NAME).
    type: dict
    default: {}
  timeout:
    description:
      - Seconds the command may run before it is killed and the module fails saying so.
    type: int
    default: 600
  min_busbw_gbps:
    description:
      - The least bus bandwidth, in GB/s, at the largest buffer of the run (the higher of out-of-place and in-place).
      - The default is NVIDIA's floor for two Sparks over one 200 GbE cable, 175 Gb/s (C(MIN_NCCL_TEST_BW) of
        spark_cluster_setup.py). Set 0 to report without a floor.
    type: float
    default: 21.875
  allow_socket_transport:
    description:
      - Accept NCCL moving the data over TCP sockets (C(NET/Socket)), for hosts with no RDMA link such as the lab.
      - When false, a run whose NCCL_DEBUG lines show the socket transport fails.
    type: bool
    default: false
notes:
  - The command runs with C(LC_ALL=C). The transport is only known when the output carries C(NCCL_DEBUG=INFO) lines;
    pass C(-x NCCL_DEBUG=INFO) to mpirun to see it.
  - A 16 GiB buffer takes about 32 GB per node of a Spark's unified memory; keep other workloads off the nodes while it runs.
seealso:
  - name: nccl-tests
    description: The NVIDIA benchmarks this module runs and reads.
    link: https://github.com/NVIDIA/nccl-tests
"""

EXAMPLES = r"""
- name: Measure the RoCE link between two Sparks
  sparkinfer.cluster.nccl_perf:
    argv:
      - mpirun
      - -np
      - "2"
      - -H
      - spark-1:1,spark-2:1
      - -x
      - NCCL_SOCKET_IFNAME=enp1s0f1np1
      - -x
      - NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1
      - -x
      - NCCL_DEBUG=INFO
      - /opt/nccl-tests/build/all_gather_perf
      - -b
      - 16G
      - -e
      - 16G
      - -f
      - "2"
    timeout: 300
  register: sparkinfer_nccl

- name: Show the bus bandwidth
  ansible.builtin.debug:
    msg: "{{ sparkinfer_nccl.nccl_perf.busbw_at_largest_gbps }} GB/s over {{ sparkinfer_nccl.nccl_perf.transport }}"

- name: Gate on a captured run, accepting TCP sockets (no RDMA in the lab)
  sparkinfer.cluster.nccl_perf:
    output: "{{ lookup('ansible.builtin.file', 'all_reduce_perf.log') }}"
    allow_socket_transport: true
    min_busbw_gbps: 0
"""

RETURN = r"""
nccl_perf:
  description: The facts of the run; each is null (or empty) when the output does not say it.
  returned: always
  type: dict
  contains:
    test: {description: "The nccl-tests binary that ran.", type: str, returned: always, sample: all_gather_perf}
    concluded: {description: "True when the run printed C(# Collective test concluded).", type: bool, returned: always, sample: true}
    tests_version: {description: "The nccl-tests version (2.17 and later print it).", type: str, returned: always, sample: 2.19.6}
    nccl_library_version: {description: "The NCCL library nccl-tests reported.", type: str, returned: always, sample: 2.28.9}
    nccl_version: {description: "The NCCL version of the C(NCCL version) line (NCCL_DEBUG).", type: str, returned: always, sample: 2.28.9+cuda13.0}
    parameters:
      description: "The run's parameters line: C(nthread), C(ngpus), C(min_bytes), C(max_bytes), C(step), C(iters) and the others printed."
      type: dict
      returned: always
    devices:
      description: "The ranks listed under C(# Using devices): C(rank), C(group), C(pid), C(host), C(device), C(bus_id), C(name)."
      type: list
      elements: dict
      returned: always
      sample: [{rank: 0, group: 0, pid: 37755, host: spark-1, device: 0, bus_id: "000f:01:00", name: NVIDIA GB10}]
    ranks: {description: "How many ranks the run listed.", type: int, returned: always, sample: 2}
    hosts: {description: "The hosts of the ranks, in rank order.", type: list, elements: str, returned: always, sample: [spark-1, spark-2]}
    columns: {description: "The table header as printed.", type: list, elements: str, returned: always}
    rows:
      description:
        - "One entry per result row: C(size_bytes), C(count), C(type), C(redop), C(root), and C(out_of_place) and C(in_place),
          each with C(time_us), C(algbw_gbps), C(busbw_gbps), C(wrong) (the C(#wrong) count) and C(error) (the old C(error) column)."
      type: list
      elements: dict
      returned: always
    unparsed_rows: {description: "Lines that start like a result row but do not fit the table (a run cut short).", type: list, elements: str, returned: always}
    largest_size_bytes: {description: "The largest buffer of the run.", type: int, returned: always, sample: 17179869184}
    busbw_at_largest_gbps:
      description: "The higher bus bandwidth (out-of-place, in-place) at the largest buffer: what the gate compares."
      type: float
      returned: always
      sample: 22.98
    max_busbw_gbps: {description: "The highest bus bandwidth of any row.", type: float, returned: always, sample: 22.98}
    avg_bus_bandwidth_gbps: {description: "C(# Avg bus bandwidth), the mean over all rows.", type: float, returned: always, sample: 22.9611}
    out_of_bounds: {description: "C(# Out of bounds values).", type: int, returned: always, sample: 0}
    out_of_bounds_ok: {description: "True when that line says OK.", type: bool, returned: always, sample: true}
    wrong_total: {description: "The sum of the C(#wrong) cells, or null without that column.", type: int, returned: always, sample: 0}
    max_error: {description: "The largest value of the old C(error) column.", type: float, returned: always, sample: null}
    transport:
      description: "The inter-node transport seen: C(NET/IB), C(NET/Socket), another C(NET/<plugin>), or null when unknown."
      type: str
      returned: always
      sample: NET/IB
    socket_fallback: {description: "True when NCCL moved the data over TCP sockets.", type: bool, returned: always, sample: false}
    networks: {description: "What C(Using network) lines named.", type: list, elements: str, returned: always, sample: [IB]}
    ib_hcas:
      description: "The HCA ports of C(NET/IB : Using) lines: C(device), C(port), C(link_layer)."
      type: list
      elements: dict
      returned: always
      sample: [{device: rocep1s0f1, port: 1, link_layer: RoCE}, {device: roceP2p1s0f1, port: 1, link_layer: RoCE}]
    ib_no_device: {description: "True when NCCL said C(NET/IB : No device found).", type: bool, returned: always, sample: false}
    oob_interfaces: {description: "The out-of-band interfaces of the IB transport.", type: list, elements: dict, returned: always}
    socket_interfaces: {description: "The interfaces of C(NET/Socket : Using) lines.", type: list, elements: dict, returned: always}
    channel_transports: {description: "The transports of the channel lines (C(via NET/IB/0) gives C(NET/IB)).", type: list, elements: str, returned: always}
    nccl_warnings: {description: "The C(NCCL WARN) lines (at most 20).", type: list, elements: str, returned: always}
    error_lines: {description: "Lines that tell why a run failed (test failures, mpirun and ssh errors).", type: list, elements: str, returned: always}
problems:
  description: What is wrong with the run, each with its likely cause and fix; empty on success.
  returned: always
  type: list
  elements: str
  sample: []
rc:
  description: The command's exit status, or null when O(output) was given.
  returned: always
  type: int
  sample: 0
cmd:
  description: The argument vector that ran (with the C(timeout) wrapper), or null when O(output) was given.
  returned: always
  type: list
  elements: str
tail:
  description: The last 20 lines of the output.
  returned: always
  type: list
  elements: str
"""

import time
from collections.abc import Callable
from dataclasses import replace

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import bounded_argv, timed_out
from ansible_collections.sparkinfer.cluster.plugins.module_utils._nccl_tests import (
    SPARK_PAIR_MIN_BUSBW_GBPS,
    NcclTestsParseError,
    assess,
    parse_nccl_tests,
)

TAIL_LINES = 20


class NcclPerf:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float]) -> None:
        self.module = module
        self.clock = clock
        self.params = module.params

    def run(self) -> tuple[str, int | None, list[str] | None, bool]:
        """Run the command under timeout(1); return its output, rc, argv and whether it timed out."""
        if self.params["output"] is not None:
            return self.params["output"], None, None, False
        argv = self.params["argv"]
        timeout = self.params["timeout"]
        if not argv:
            self.module.fail_json(msg="argv is empty: give the nccl-tests command to run")
        if timeout <= 0:
            self.module.fail_json(msg=f"timeout must be a positive number of seconds, not {timeout}")
        wrapper = self.module.get_bin_path("timeout", required=True)
        cmd = bounded_argv(wrapper, timeout, argv)
        environ = {str(name): str(value) for name, value in self.params["environment"].items()}
        environ["LC_ALL"] = "C"
        started = self.clock()
        rc, out, err = self.module.run_command(cmd, environ_update=environ)
        elapsed = self.clock() - started
        return out + ("\n" + err if err else ""), rc, cmd, timed_out(rc, elapsed, timeout)

    def main(self) -> None:
        text, rc, cmd, timed_out = self.run()
        tail = text.splitlines()[-TAIL_LINES:]
        try:
            result = parse_nccl_tests(text)
        except NcclTestsParseError as exc:
            self.module.fail_json(msg=f"cannot parse the nccl-tests output: {exc}", rc=rc, cmd=cmd, tail=tail, problems=[str(exc)])
        if result.test is None and cmd:
            # Runs of nccl-tests before 2.17 do not print their own name: take it from the command.
            names = [word.rsplit("/", 1)[-1] for word in cmd]
            result = replace(result, test=next((name for name in names if name.endswith(("_perf", "_perf_mpi"))), None))
        facts = result.as_dict()
        problems = assess(
            result,
            min_busbw_gbps=self.params["min_busbw_gbps"],
            allow_socket_transport=self.params["allow_socket_transport"],
            rc=rc,
            timed_out=timed_out,
            timeout_s=self.params["timeout"],
        )
        outcome = {"changed": False, "nccl_perf": facts, "problems": problems, "rc": rc, "cmd": cmd, "tail": tail}
        if problems:
            message = problems[0] if len(problems) == 1 else " ".join(f"({n}) {problem}" for n, problem in enumerate(problems, 1))
            self.module.fail_json(msg=message, **outcome)
        self.module.exit_json(**outcome)


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "argv": {"type": "list", "elements": "str"},
            "output": {"type": "str"},
            "environment": {"type": "dict", "default": {}},
            "timeout": {"type": "int", "default": 600},
            "min_busbw_gbps": {"type": "float", "default": SPARK_PAIR_MIN_BUSBW_GBPS},
            "allow_socket_transport": {"type": "bool", "default": False},
        },
        mutually_exclusive=[("argv", "output")],
        required_one_of=[("argv", "output")],
        supports_check_mode=False,
    )
    NcclPerf(module, clock).main()


if __name__ == "__main__":
    main()
