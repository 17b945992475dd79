# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a value is one IPv4 address in dotted-quad form: what the roles put in firewall rules, argv and files
(module_utils/_ipv4.py, which the rule tables use too)."""

from __future__ import annotations

from ansible_collections.sparkinfer.cluster.plugins.module_utils._ipv4 import is_ipv4_address


def ipv4_address(value):
    """True for a string such as ``192.168.177.11``; False for a prefix, a hostname, IPv6, leading zeros or anything else."""
    return is_ipv4_address(value)


class TestModule:
    def tests(self):
        return {"ipv4_address": ipv4_address}
