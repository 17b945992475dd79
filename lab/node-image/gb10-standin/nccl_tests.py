"""Lab stand-in for nccl-tests' all_gather_perf between two DGX Sparks: prints what a real pair printed.

Only in the lab node image: nccl-tests needs the GPUs and the RoCE link, which the lab has not. Each run it knows is a
real run of two Sparks (SOURCES.md beside this file), chosen by the buffer sizes asked and by NCCL_DEBUG in the
environment, as the real program prints NCCL's INFO lines only when asked. Anything else is refused, so a role that asks
for another run fails in the lab until the stand-in learns that run from a real output.
"""

import os
import sys
from pathlib import Path

HERE = Path("/usr/share/sparkinfer-gb10-standin")

# (program, arguments, NCCL_DEBUG and NCCL_DEBUG_SUBSYS): the real output of that run.
RUNS = {
    ("all_gather_perf", ("-b", "1G", "-e", "1G"), ("INFO", "INIT,NET")): "all-gather-1g-debug-init-net.txt",
    ("all_gather_perf", ("-b", "16G", "-e", "16G", "-f", "2"), (None, None)): "all-gather-16g.txt",
}


def main(program, argv):
    debug = (os.environ.get("NCCL_DEBUG"), os.environ.get("NCCL_DEBUG_SUBSYS"))
    output = RUNS.get((program, tuple(argv), debug))
    if output is None:
        sys.stderr.write(
            f"{program} (nccl-tests lab stand-in): no real output known for arguments {' '.join(argv)} with NCCL_DEBUG,"
            f" NCCL_DEBUG_SUBSYS {debug} (the runs it knows: {HERE / 'SOURCES.md'})\n"
        )
        return 2
    sys.stdout.write((HERE / output).read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
