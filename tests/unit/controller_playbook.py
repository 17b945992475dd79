"""Run one of the collection's playbooks on the controller (this machine), as a user would from the admin box.

For the playbooks, or the runs of them, that never reach a node: the collection as `make host setup` installed it,
the repository's ansible.cfg, no colour, this Python for localhost. ANSIBLE_COLLECTIONS_PATH, when set, says where the
collection is installed instead (make mutation points it at its unmutated copy).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def run_controller_playbook(playbook: str, inventory: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"),
        "ANSIBLE_COLLECTIONS_PATH": os.environ.get("ANSIBLE_COLLECTIONS_PATH") or str(REPO / ".cache" / "collections"),
        "ANSIBLE_FORCE_COLOR": "0",
        "ANSIBLE_NOCOLOR": "1",
    }
    command = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "-i",
        str(inventory),
        str(REPO / "playbooks" / playbook),
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
