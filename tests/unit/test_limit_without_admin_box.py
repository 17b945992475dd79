"""A playbook that makes its part on the admin box (a play on localhost) refuses a --limit that leaves localhost out,
naming sparkinfer_targets; site.yml, limited to one cluster, goes on without its closing status table.

The refusal comes before any connection (the node's address is never reached), so the run stays on the controller.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from .controller_playbook import REPO, run_controller_playbook


def limited_run(tmp_path: Path, playbook: str) -> subprocess.CompletedProcess:
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    sparkinfer_nodes:\n      hosts:\n        spark-b: {ansible_host: 192.0.2.1}\n", encoding="utf-8")
    return run_controller_playbook(playbook, inventory, "--limit", "spark-b")


@pytest.mark.parametrize("playbook", ["doctor.yml", "status.yml", "rollout.yml", "prometheus_targets.yml"])
def test_a_limit_that_leaves_out_the_admin_box_is_refused_naming_sparkinfer_targets(tmp_path, playbook):
    run = limited_run(tmp_path, playbook)
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    output = " ".join((run.stdout + run.stderr).split())
    assert (
        f"{playbook} does its part on the admin box (localhost), which --limit spark-b leaves out. Name the nodes with -e sparkinfer_targets=spark-b instead."
    ) in output, output[-3000:]


def test_site_limited_to_one_cluster_goes_on_without_its_status_table():
    plays = yaml.safe_load((REPO / "playbooks" / "site.yml").read_text(encoding="utf-8"))
    status = next(play for play in plays if play.get("ansible.builtin.import_playbook") == "status.yml")
    assert status["vars"] == {"__sparkinfer_in_site": True}
