# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Whether a value is one IPv4 address in dotted-quad form: what the roles put in firewall rules, argv and files."""

from __future__ import annotations

import ipaddress


def is_ipv4_address(value: object) -> bool:
    """True for a string such as ``192.168.177.11``; False for a prefix, a hostname, IPv6, leading zeros or anything else."""
    if not isinstance(value, str):
        return False
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        return False
    return True
