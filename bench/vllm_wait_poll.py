"""What one poll of vllm_wait costs when a container's log holds nothing new, by the size of that log.

vllm_wait reads a container's log through ContainerLog (plugins/module_utils/_vllm_log_source.py),
which asks `docker logs` again at every poll (every 2 s) for what is new. For each size, a
container of the lab node image prints that many real lines (the server mix of
bench/vllm_log_parser.py: a real start, then real access and engine metrics lines, cycled), its
last line again two seconds later, and sleeps; the bench reads the whole log once, then times polls that find nothing new: the wall
time of each poll and the CPU time the Docker daemon spent on them. Target: the cost does not
grow with the log (the last size's figure within 2x of the first's).

Needs the Docker engine and the lab node image (`make lab-image`).
Usage: python bench/vllm_wait_poll.py [LINES ...]   (default: 20000 200000)
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / ".cache" / "collections"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vllm_log_parser import server_lines, write_log  # noqa: E402

from ansible_collections.sparkinfer.cluster.plugins.module_utils._vllm_log_source import ContainerLog, DockerCommands  # noqa: E402

IMAGE = "sparkinfer-lab-node:latest"
POLLS = 10


def run(argv: list[str]) -> tuple[int, str, str]:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def dockerd_cpu_seconds() -> float:
    pid = subprocess.run(["pidof", "dockerd"], capture_output=True, text=True, check=True).stdout.split()[0]
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(lines: int, work: Path) -> dict:
    log = work / f"server-{lines}.log"
    write_log(log, lines, *server_lines())
    name = f"sparkinfer-bench-poll-{lines}"
    subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    # The log printed at once, then its last line again two seconds later: as in a server's log, the newest
    # lines are not all of the same second as the first ones.
    printing = ["--entrypoint", "sh", IMAGE, "-c", "cat /server.log; sleep 2; tail -n 1 /server.log; exec sleep 3600"]
    subprocess.run(["docker", "run", "-d", "--name", name, "--network", "none", "-v", f"{log}:/server.log:ro", *printing], capture_output=True, check=True)
    try:
        commands = DockerCommands(run, docker="docker", timeout="timeout", shell="sh", seconds=120, workdir=str(work))
        source = ContainerLog(commands, name)
        read = 0
        deadline = time.monotonic() + 120
        while read < lines + 1 and time.monotonic() < deadline:
            read += len(source.read_new())
            while source.backlog():
                read += len(source.read_new())
        assert read == lines + 1, f"read {read} of {lines + 1} lines"
        walls, daemon = [], []
        for _poll in range(POLLS):
            cpu, start = dockerd_cpu_seconds(), time.perf_counter()
            assert source.read_new() == [], "a poll found new lines in a log that no longer grows"
            walls.append(time.perf_counter() - start)
            daemon.append(dockerd_cpu_seconds() - cpu)
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, check=False)
    return {
        "log_lines": lines,
        "log_mib": round(log.stat().st_size / 2**20, 1),
        "poll_wall_ms_median": round(statistics.median(walls) * 1000, 1),
        "poll_dockerd_cpu_ms_mean": round(statistics.mean(daemon) * 1000, 1),
    }


def main() -> None:
    sizes = [int(arg) for arg in sys.argv[1:]] or [20_000, 200_000]
    with tempfile.TemporaryDirectory() as work:
        results = [measure(lines, Path(work)) for lines in sizes]
    for result in results:
        print(json.dumps(result))
    first, last = results[0], results[-1]
    print(f"empty poll, {last['log_lines']:,} vs {first['log_lines']:,} lines: wall x{last['poll_wall_ms_median'] / first['poll_wall_ms_median']:.2f}")


if __name__ == "__main__":
    main()
