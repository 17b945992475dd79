"""Print where a run's CPU went, by command name, from a Linux process accounting file (acct v3).

    python3 tools/cpu-by-command.py PACCT [ROWS]

Each process that ended while accounting was on (tools/cpu-profile.sh turns it on around a command) is one record:
its command name (16 characters at most), its user and system CPU time, and whether it forked without an exec
(then "(fork)" is added: Ansible's workers are forks of ansible-playbook). Processes of the node containers and of
the containers in them are in it too, under their own names: python3.11 runs the modules Ansible sends, in the
lab nodes (the Debian python3.11 Ansible's interpreter discovery picks) and on the admin box for its local
tasks; python is the lab vLLM image's. A process still running when accounting stopped (dockerd, containerd) is
not counted.
"""

from __future__ import annotations

import struct
import sys
from collections import Counter
from pathlib import Path

# struct acct_v3 (linux/acct.h): flag, version, tty, exitcode, uid, gid, pid, ppid, btime, etime (float), then
# utime, stime, mem, io, rw, minflt, majflt, swaps (comp_t each), then the command name.
RECORD = struct.Struct("<BBHIIIIIIf8H16s")
ACCT_VERSION = 3
FORKED_WITHOUT_EXEC = 0x01
TICKS_PER_SECOND = 100  # AHZ, the unit of utime and stime


def comp_t(value: int) -> int:
    """A comp_t: a 13-bit mantissa and a 3-bit base-8 exponent."""
    return (value & 0x1FFF) << (3 * ((value >> 13) & 0x7))


def cpu_by_command(data: bytes) -> tuple[Counter[str], Counter[str]]:
    seconds: Counter[str] = Counter()
    processes: Counter[str] = Counter()
    for offset in range(0, len(data) - RECORD.size + 1, RECORD.size):
        fields = RECORD.unpack_from(data, offset)
        if fields[1] != ACCT_VERSION:
            raise SystemExit(f"record {offset // RECORD.size} is acct version {fields[1]}, not {ACCT_VERSION}")
        name = fields[-1].split(b"\0")[0].decode(errors="replace")
        if fields[0] & FORKED_WITHOUT_EXEC:
            name += "(fork)"
        seconds[name] += (comp_t(fields[10]) + comp_t(fields[11])) / TICKS_PER_SECOND
        processes[name] += 1
    return seconds, processes


def main() -> None:
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    seconds, processes = cpu_by_command(Path(sys.argv[1]).read_bytes())
    total = sum(seconds.values())
    print(f"{sum(processes.values())} processes ended, {total:.0f} CPU-s")
    print(f"{'CPU-s':>9} {'share':>6} {'processes':>9}  command")
    for name, used in seconds.most_common(int(sys.argv[2]) if len(sys.argv) == 3 else 25):
        print(f"{used:9.1f} {100 * used / total:5.1f}% {processes[name]:9d}  {name}")


if __name__ == "__main__":
    main()
