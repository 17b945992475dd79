# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""One iptables chain that lets only loopback, replies and given IPv4 sources reach given TCP ports,
and the one jump to it from INPUT: the rules as `iptables -S` prints them, the rules file that
`iptables-restore --noflush` loads (at boot and when the running rules differ), and what differs.

Rules are compared as argument lists (shlex): iptables -S quotes a comment only when it has a space,
the rules file always does. No I/O here.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass

FAMILIES = ("ipv4", "ipv6")


@dataclass(frozen=True)
class Chain:
    """What the chain should be: its name, the guarded TCP ports, the IPv4 sources let in, the jump's comment."""

    name: str
    ports: tuple[str, ...]
    sources: tuple[str, ...]
    comment: str

    def jump(self) -> str:
        """The INPUT rule that sends TCP for the ports to the chain, without its `-A INPUT`."""
        return f'-p tcp -m multiport --dports {",".join(self.ports)} -m comment --comment "{self.comment}" -j {self.name}'

    def rules(self, family: str) -> list[str]:
        """The chain's rules in `iptables -S` form; sources are IPv4, so the IPv6 chain lets in loopback and replies only."""
        sources = self.sources if family == "ipv4" else ()
        return [
            f"-A {self.name} -i lo -j ACCEPT",
            f"-A {self.name} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT",
            *(f"-A {self.name} -s {source}/32 -j ACCEPT" for source in sources),
            f"-A {self.name} -j DROP",
        ]

    def rules_file(self, family: str, header: Sequence[str] = (), deleted_jumps: Sequence[str] = ()) -> str:
        """The rules in iptables-restore form: the chain (declared, so flushed, then filled) and the jump first in INPUT;
        with `deleted_jumps` (`iptables -S` lines), those jumps deleted in the same commit."""
        lines = [*(f"# {line}" for line in header), "*filter", f":{self.name} - [0:0]", *_deletes(deleted_jumps)]
        lines += [*self.rules(family), f"-I INPUT 1 {self.jump()}", "COMMIT"]
        return "\n".join(lines) + "\n"

    def listed_jump(self) -> str:
        """The jump as `iptables -S` lists it."""
        return f"-A INPUT {self.jump()}"


@dataclass(frozen=True)
class Running:
    """The chain as one family's filter table has it now."""

    exists: bool
    rules: list[str]
    jumps: list[str]


def _deletes(jumps: Sequence[str]) -> list[str]:
    """`iptables -S` lines of INPUT as iptables-restore lines that delete them."""
    return [f"-D INPUT {jump[len('-A INPUT ') :]}" for jump in jumps]


def read_running(listing: str, chain: str) -> Running:
    """The chain's rules and the INPUT rules that jump to it, from `iptables -S` (all chains of the filter table)."""
    lines = listing.splitlines()
    return Running(
        exists=f"-N {chain}" in lines,
        rules=[line for line in lines if line.startswith(f"-A {chain} ")],
        jumps=[line for line in lines if line.startswith("-A INPUT ") and line.endswith(f" -j {chain}")],
    )


def _same(first: Sequence[str], second: Sequence[str]) -> bool:
    return [shlex.split(line) for line in first] == [shlex.split(line) for line in second]


def in_place(running: Running, chain: Chain, family: str) -> bool:
    """Whether the running chain and its jump are exactly what `chain` wants for `family`."""
    return running.exists and _same(running.rules, chain.rules(family)) and _same(running.jumps, [chain.listed_jump()])


def absent(running: Running) -> bool:
    return not running.exists and not running.jumps


def restore_to_put(running: Running, chain: Chain, family: str) -> str:
    """iptables-restore --noflush input that makes the running rules what `chain` wants, in one commit: every jump
    to the chain deleted (one of an earlier configuration, a duplicate), the chain declared (so flushed) and
    filled, the one jump inserted first in INPUT."""
    return chain.rules_file(family, deleted_jumps=running.jumps)


def restore_to_remove(running: Running, name: str) -> str:
    """iptables-restore --noflush input that deletes the jumps to the chain, then the chain (emptied first)."""
    lines = ["*filter", *_deletes(running.jumps)]
    if running.exists:
        lines += [f"-F {name}", f"-X {name}"]
    return "\n".join([*lines, "COMMIT"]) + "\n"


def shown(running: Running) -> str:
    """The running jumps and chain rules, one per line (a diff's before)."""
    return "".join(f"{line}\n" for line in running.jumps + running.rules)


def wanted_shown(chain: Chain, family: str) -> str:
    """The jump and the chain rules `chain` wants, as shown() prints them (a diff's after)."""
    return shown(Running(exists=True, rules=chain.rules(family), jumps=[chain.listed_jump()]))
