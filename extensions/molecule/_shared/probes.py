"""TCP probes the scenarios' firewall tests make: from this test process, and from inside a lab node."""

from __future__ import annotations

import shlex
import socket
from concurrent.futures import ThreadPoolExecutor


def connects(address: str, port: int, timeout: float = 3.0) -> bool:
    """Whether a TCP connection from this test process (the molecule host, which has an address on each fabric) to address:port succeeds."""
    try:
        with socket.create_connection((address, port), timeout=timeout):
            return True
    except OSError:
        return False


def connects_any(targets, timeout: float = 3.0) -> dict:
    """connects() for several (address, port) pairs at once: a port behind a DROP rule waits the whole timeout, so
    probing them one after another costs timeout seconds each."""
    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        answers = pool.map(lambda target: connects(*target, timeout=timeout), targets)
        return dict(zip(targets, answers))


def connects_from(host, address: str, port: int) -> bool:
    """Whether a TCP connection from inside a lab node (a testinfra host) to address:port succeeds."""
    probe = f"import socket; socket.create_connection(({address!r}, {port}), timeout=3).close()"
    return host.run(f"python3 -c {shlex.quote(probe)}").rc == 0
