"""A lab node's reboot: its container restarted, as the scenarios that test what comes back after a reboot make it."""

from __future__ import annotations

import subprocess
import time


def reboot(node: str, seconds: int = 120) -> None:
    """Restart the node's container and wait until its systemd has booted: a new network namespace (no iptables rules
    but what the boot units put back), systemd's boot, Docker starting the containers whose restart policy asks for it."""
    subprocess.run(["docker", "restart", "--timeout", "10", node], check=True, capture_output=True, timeout=120)
    deadline = time.monotonic() + seconds
    while True:
        # Until systemd has its bus, systemctl only says "Failed to connect to bus".
        booted = subprocess.run(
            ["docker", "exec", node, "timeout", str(seconds), "systemctl", "is-system-running", "--wait"],
            check=False,
            capture_output=True,
            text=True,
            timeout=seconds + 30,
        )
        # "degraded" is booted too (a unit failed): the test that reboots says what it needs running.
        if booted.stdout.strip() in ("running", "degraded"):
            return
        assert time.monotonic() < deadline, f"{node} did not boot in {seconds} s: {booted.stdout} {booted.stderr}"
        time.sleep(1)
