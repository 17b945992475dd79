# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Pure reader of what `rsync -a --itemize-changes` prints while it pushes a directory (rsync 3.x).

Each line is an eleven-character summary, a space and the name: `<f+++++++++ config.json` is a file sent (missing
there, or another size or time; with --checksum, other content), `*deleting   notes.txt` a name only the receiving
side holds (listed with --delete), and a summary starting with `.` (`.d..t...... ./`, `.f..t...... x`) an attribute to
set with nothing sent. Directories made on the way (`cd+++++++++ sub/`) hold the files that are sent. No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass

_SUMMARY_WIDTH = 11


@dataclass(frozen=True)
class PushPlan:
    """What a push sends, and what only the receiving side holds."""

    sent: tuple[str, ...]
    extra: tuple[str, ...]


def read_itemized(text: str) -> PushPlan:
    """The files a push sends (or would, in a dry run) and the names only the receiving side holds."""
    sent, extra = [], []
    for line in text.splitlines():
        summary, name = line[:_SUMMARY_WIDTH].rstrip(), line[_SUMMARY_WIDTH + 1 :]
        if summary == "*deleting":
            extra.append(name)
        elif summary.startswith("<f"):
            sent.append(name)
    return PushPlan(sent=tuple(sent), extra=tuple(extra))
