"""Lab stand-in for nvidia-smi on a DGX Spark (NVIDIA GB10): answers what a real GB10 prints.

Only in the lab node image. Every output is a real GB10's (see SOURCES.md beside this file):
the plain table, `-L`, and `--query-gpu=FIELDS --format=csv[,noheader][,nounits]` for the fields
in QUERY_FIELDS. /usr/bin/nvidia-smi runs it. Anything else is refused, so a role that starts using a new query fails in the
lab until the stand-in learns that query from a real output.
"""

import sys
import time
from pathlib import Path

HERE = Path("/usr/share/sparkinfer-gb10-standin")

# field: (csv header unit or None, value). Memory fields are [N/A] on GB10: unified memory.
QUERY_FIELDS = {
    "index": (None, "0"),
    "name": (None, "NVIDIA GB10"),
    "gpu_name": (None, "NVIDIA GB10"),
    "uuid": (None, "GPU-d51f1f69-4063-9beb-b3e9-734334ec9006"),
    "pci.bus_id": (None, "0000000F:01:00.0"),
    "compute_cap": (None, "12.1"),
    "driver_version": (None, "580.173.02"),
    # Another GB10's (driver 580.142), the only real answer known for these two fields.
    "temperature.gpu": (None, "52"),
    "pstate": (None, "P0"),
    "memory.total": ("MiB", "[N/A]"),
    "memory.used": ("MiB", "[N/A]"),
    "memory.free": ("MiB", "[N/A]"),
}


def refuse(message):
    sys.stderr.write(f"nvidia-smi (GB10 lab stand-in): {message}\n")
    return 2


def query(fields_arg, format_arg):
    fields = [field.strip() for field in fields_arg.split(",") if field.strip()]
    unknown = [field for field in fields if field not in QUERY_FIELDS]
    if unknown:
        return refuse(f"no real GB10 output known for query field(s) {', '.join(unknown)}")
    options = format_arg.split(",")
    if options[0] != "csv" or not set(options[1:]) <= {"noheader", "nounits"}:
        return refuse(f"unsupported --format={format_arg}")
    if "noheader" not in options:
        header = []
        for field in fields:
            unit = QUERY_FIELDS[field][0]
            header.append(field if unit is None or "nounits" in options else f"{field} [{unit}]")
        print(", ".join(header))
    print(", ".join(QUERY_FIELDS[field][1] for field in fields))
    return 0


def main(argv):
    if not argv:
        # A real nvidia-smi starts its table with the current time, then 7 spaces.
        print(time.strftime("%a %b %e %H:%M:%S %Y") + " " * 7)
        sys.stdout.write((HERE / "plain-table.txt").read_text())
        return 0
    if argv in (["-L"], ["--list-gpus"]):
        sys.stdout.write((HERE / "list.txt").read_text())
        return 0
    options = dict(arg.split("=", 1) for arg in argv if arg.startswith("--") and "=" in arg)
    if set(options) == {"--query-gpu", "--format"} and len(options) == len(argv):
        return query(options["--query-gpu"], options["--format"])
    return refuse(f"arguments {' '.join(argv)} are not answered by the stand-in")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
