"""Run the scenario's role, or a playbook of the collection, again from a verifier, with overrides, as a user would."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

CONVERGE = Path(__file__).resolve().parent / "converge.yml"
_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def run_role(scenario: str, extra_vars: dict[str, Any], limit: str | None = None) -> tuple[int, str]:
    """Run the shared converge for `scenario` with extra vars; return its exit code and output on one line."""
    return run_playbook(CONVERGE, extra_vars, limit, scenario=scenario)


def run_playbook(
    playbook: Path, extra_vars: dict[str, Any], limit: str | None = None, *, scenario: str = "", options: tuple[str, ...] = (), inventory: str = ""
) -> tuple[int, str]:
    """Run a playbook against the scenario's inventory, or another (with more ansible-playbook options); return its exit code and output on one line."""
    argv = ["ansible-playbook", "-i", inventory or os.environ["MOLECULE_INVENTORY_FILE"], str(playbook), "-e", json.dumps(extra_vars), *options]
    if limit:
        argv += ["--limit", limit]
    run = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env={**os.environ, "MOLECULE_SCENARIO_NAME": scenario, "ANSIBLE_NOCOLOR": "1"},
        check=False,
    )
    # ansible-core 2.19 reports task failures on stderr; messages wrap, so compare on one line.
    return run.returncode, " ".join(_ANSI_ESCAPE.sub("", run.stdout + run.stderr).split())
