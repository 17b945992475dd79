"""How long validate_inventory.yml takes for a fleet, by its number of nodes.

For each size, a fleet inventory as docs/fleet.md describes it: pairs of Sparks, each pair a group whose group_vars name
its nodes (sparkinfer_cluster_hosts) and serve the two-node recipe, each node with its management and fabric addresses,
and inventories/example-two-sparks's group_vars for every node. The bench runs validate_inventory.yml against it on this
machine (no host is reached: the playbook judges the inventory alone), checks it passes, and prints its wall time.
Target: a fleet of 256 nodes in at most 5 s.

Usage: python bench/validate_inventory.py [NODES ...]   (default: 8 128 256 1024; each an even number)
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.unit.controller_playbook import run_controller_playbook  # noqa: E402

EXAMPLE = REPO / "inventories" / "example-two-sparks"
TARGET_NODES, TARGET_SECONDS = 256, 5.0


def fleet_inventory(directory: Path, nodes: int) -> Path:
    """A fleet of nodes / 2 pairs serving the two-node recipe, as docs/fleet.md lays one out."""
    pairs: dict = {}
    for pair in range(nodes // 2):
        hosts = {}
        for member in range(2):
            number = pair * 2 + member
            hosts[f"spark-{number:04d}"] = {
                "ansible_host": f"10.{10 + number // 250}.{number % 250}.21",
                "nccl_network_fabric_addresses": [f"192.168.177.{11 + member}/24", f"192.168.178.{11 + member}/24"],
            }
        pairs[f"pair_{pair:04d}"] = {"hosts": hosts, "vars": {"sparkinfer_cluster_hosts": list(hosts)}}
    hosts_file = directory / "hosts.yml"
    hosts_file.write_text(yaml.safe_dump({"all": {"vars": {"ansible_user": "ops"}, "children": {"sparkinfer_nodes": {"children": pairs}}}}), encoding="utf-8")
    shutil.copytree(EXAMPLE / "group_vars", directory / "group_vars")
    return hosts_file


def seconds_to_validate(nodes: int) -> float:
    with tempfile.TemporaryDirectory(prefix="sparkinfer-fleet-") as directory:
        inventory = fleet_inventory(Path(directory), nodes)
        started = time.monotonic()
        run: subprocess.CompletedProcess = run_controller_playbook("validate_inventory.yml", inventory)
        elapsed = time.monotonic() - started
    if run.returncode != 0:
        raise SystemExit(f"validate_inventory.yml failed for {nodes} nodes:\n{run.stdout[-3000:]}{run.stderr[-3000:]}")
    return elapsed


def main(argv: list[str]) -> int:
    sizes = [int(size) for size in argv] or [8, 128, 256, 1024]
    if any(size < 2 or size % 2 for size in sizes):
        raise SystemExit("each size is an even number of nodes (pairs), at least 2")
    print(f"{'nodes':>6} {'seconds':>8} {'ms per node':>12}")
    figures = {}
    for size in sizes:
        figures[size] = seconds_to_validate(size)
        print(f"{size:>6} {figures[size]:>8.2f} {1000 * figures[size] / size:>12.1f}", flush=True)
    if TARGET_NODES in figures:
        verdict = "met" if figures[TARGET_NODES] <= TARGET_SECONDS else "MISSED"
        print(f"target: {TARGET_NODES} nodes in at most {TARGET_SECONDS:g} s: {verdict} ({figures[TARGET_NODES]:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
