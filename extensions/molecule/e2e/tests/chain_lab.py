"""The converged pair the e2e scenario's tests read, break and restore: its nodes, playbook runs timed, the drills' report.

Works on any inventory of one head and one worker that site.yml converged: the e2e scenario's
(molecule), or the lab's (inventories/lab, for bench/drills.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import testinfra

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "_shared"))
from role_runs import run_playbook

REPO = Path(__file__).resolve().parents[4]
PLAYBOOKS = REPO / "playbooks"
REPORT = Path(os.environ.get("SPARKINFER_DRILL_REPORT", REPO / ".cache" / "drills" / "report.json"))


def inventory() -> str:
    return os.environ["MOLECULE_INVENTORY_FILE"]


@dataclass(frozen=True)
class Pair:
    head: str
    worker: str
    head_ip: str
    worker_ip: str


@cache
def listed_inventory() -> dict:
    return json.loads(subprocess.run(["ansible-inventory", "-i", inventory(), "--list"], capture_output=True, text=True, check=True).stdout)


def host_var(host: str, name: str) -> Any:
    return listed_inventory()["_meta"]["hostvars"][host][name]


@cache
def pair() -> Pair:
    """The head and the worker of the inventory, with their fabric addresses."""
    listed = listed_inventory()
    head = listed["sparkinfer_head"]["hosts"][0]
    worker = listed["sparkinfer_workers"]["hosts"][0]
    hostvars = listed["_meta"]["hostvars"]
    return Pair(head, worker, hostvars[head]["lab_fabric_ip"], hostvars[worker]["lab_fabric_ip"])


def node(name: str) -> testinfra.host.Host:
    return testinfra.get_host(f"ansible://{name}?ansible_inventory={inventory()}", sudo=True)


def assert_rendezvous_guarded() -> None:
    """The mp rendezvous on the head takes the cluster's nodes only (vllm_serve's chain)."""
    chain = node(pair().head).check_output("iptables -S SPARKINFER-VLLM").splitlines()
    assert f"-A SPARKINFER-VLLM -s {pair().head_ip}/32 -j ACCEPT" in chain
    assert f"-A SPARKINFER-VLLM -s {pair().worker_ip}/32 -j ACCEPT" in chain
    assert chain[-1] == "-A SPARKINFER-VLLM -j DROP"


def api_key() -> str:
    return (Path.home() / ".config" / "sparkinfer" / f"{pair().head}-vllm-api-key").read_text(encoding="utf-8").split()[0]


def ray_token() -> str:
    return (Path.home() / ".config" / "sparkinfer" / f"{pair().head}-ray-auth-token").read_text(encoding="utf-8").split()[0]


@dataclass
class Run:
    code: int
    output: str
    seconds: float


def timed(playbook: str, extra_vars: dict[str, Any] | None = None, *options: str, inventory: str = "") -> Run:
    """Run a playbook of the collection against the pair (or another inventory of its nodes); the seconds are the whole run's, start to exit."""
    start = time.monotonic()
    code, output = run_playbook(PLAYBOOKS / playbook, extra_vars or {}, options=options, inventory=inventory)
    return Run(code, output, round(time.monotonic() - start, 1))


def record(drill: str, seconds: float, bound: float, detected: str) -> None:
    """Add a drill's seconds to detection to the report that bench/drills.py prints, then assert its bound:
    the bound reported is the bound tested, and a miss still shows in the report."""
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    report = json.loads(REPORT.read_text(encoding="utf-8")) if REPORT.exists() else {}
    report[drill] = {"seconds": seconds, "bound": bound, "detected": detected}
    REPORT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    assert seconds <= bound, f"{drill}: detected after {seconds} s, over its bound of {bound} s"
