# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The platform table's verdicts on a node's driver, kernel and image (module_utils/_platform.py)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.sparkinfer.cluster.plugins.module_utils._platform import PARTS, VERDICTS, PlatformError, judge, platform_of, verdicts_message


def platform_verdicts(facts, parts=PARTS, accepted_branches=(), fabric=True):
    """The table's rows of these parts that apply to the node whose facts these are, refusals first."""
    if not isinstance(facts, dict):
        raise AnsibleFilterError(f"platform_verdicts: expected the node's facts as a dictionary, got {type(facts).__name__}")
    if isinstance(parts, str):
        parts = [parts]
    try:
        return judge(platform_of(facts, accepted_branches=accepted_branches, fabric=bool(fabric)), parts)
    except (PlatformError, TypeError) as error:
        raise AnsibleFilterError(f"platform_verdicts: {error}") from error


def platform_message(verdicts, verdict="refuse"):
    """The platform_verdicts rows of one verdict in one message, each with its fix and source ('' when none has it)."""
    if verdict not in VERDICTS:
        raise AnsibleFilterError(f"platform_message: verdict is {verdict!r}; give one of {', '.join(VERDICTS)}")
    if not isinstance(verdicts, list) or not all(isinstance(row, dict) and {"what", "fix", "source", "verdict"} <= set(row) for row in verdicts):
        raise AnsibleFilterError("platform_message: expected the rows platform_verdicts returned")
    return verdicts_message(verdicts, verdict)


class FilterModule:
    def filters(self):
        return {"platform_verdicts": platform_verdicts, "platform_message": platform_message}
