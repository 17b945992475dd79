# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Whether a node's INPUT chains still send a listener's ports to the collection's firewall chain (doctor.yml).

node_firewall puts a chain in both iptables and ip6tables and a jump to it in INPUT of each: a listener that binds every
address (Ray, the mp rendezvous) is reachable over IPv6 as well, so one family without the jump leaves it open.

No I/O here: the input is what ``iptables -S INPUT`` and ``ip6tables -S INPUT`` printed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any


def input_jumps(reads: Iterable[Mapping[str, Any]], chain: str) -> dict[str, Any]:
    """{guards, open}: guards is True when every INPUT read jumps to chain, False when one does not, None when none
    could be read; open lists the commands (iptables, ip6tables) whose INPUT does not jump to it.

    Each read is a loop result of the command: ``item`` (the command), ``rc`` and ``stdout``; a read that failed or was
    skipped says nothing.
    """
    jump = re.compile(rf"^-A INPUT .*-j {re.escape(chain)}$", re.MULTILINE)
    read = [result for result in reads if result.get("rc") == 0 and isinstance(result.get("stdout"), str)]
    open_in = [str(result.get("item")) for result in read if not jump.search(result["stdout"])]
    return {"guards": (not open_in) if read else None, "open": open_in}
