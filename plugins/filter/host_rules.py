# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The host rule table's findings on a DGX Spark, and their message (module_utils/_host_rules.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._host_rules import SEVERITIES, HostRuleError, findings_message, host_findings


def host_rule_findings(reading, phase="preflight"):
    """Every rule's findings on a host's reading (gb10_facts' facts with gb10_host's settings) in this phase."""
    if not isinstance(reading, dict):
        raise AnsibleFilterError(f"host_rule_findings: expected the host's reading as a dictionary, got {type(reading).__name__}")
    try:
        return host_findings(reading, phase)
    except HostRuleError as error:
        raise AnsibleFilterError(f"host_rule_findings: {error}") from error
    except (KeyError, TypeError) as error:
        raise AnsibleFilterError(f"host_rule_findings: the reading lacks what the rules judge: {error!r}") from error


def host_rule_message(findings, node, severity="error"):
    """The findings of one severity in one message, each with the node, its evidence, fix and source ('' when none)."""
    if severity not in SEVERITIES:
        raise AnsibleFilterError(f"host_rule_message: severity is {severity!r}; give one of {', '.join(SEVERITIES)}")
    if not isinstance(findings, list) or not all(
        isinstance(item, dict) and {"severity", "what", "evidence", "fix", "source"} <= set(item) for item in findings
    ):
        raise AnsibleFilterError("host_rule_message: expected the findings host_rule_findings returned")
    return findings_message(str(node), findings, severity)


class FilterModule:
    def filters(self):
        return {"host_rule_findings": host_rule_findings, "host_rule_message": host_rule_message}
