"""doctor.yml on an inventory without nodes says so, naming where nodes go, instead of an undefined variable.

The node plays match no host, so the whole run stays on the controller: it runs here.
"""

from __future__ import annotations

from .controller_playbook import run_controller_playbook


def test_an_inventory_without_nodes_is_named_as_such(tmp_path):
    inventory = tmp_path / "hosts.yml"
    inventory.write_text("all:\n  children:\n    sparkinfer_nodes:\n      hosts: {}\n", encoding="utf-8")
    run = run_controller_playbook("doctor.yml", inventory, "-e", f"doctor_report_dir={tmp_path / 'reports'}")
    assert run.returncode == 2, run.stdout[-3000:] + run.stderr[-3000:]
    output = " ".join(run.stdout.split())
    assert "No node was read: the targets (the group sparkinfer_nodes) hold no host of this inventory." in output, run.stdout[-3000:]
    assert "is undefined" not in run.stdout
    assert not (tmp_path / "reports").exists()
