# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""Docker's json-file log rotation, as a role's <prefix>log_max_size and <prefix>log_max_files set it: the one rule the
ray_cluster and vllm_serve tables share. No I/O here."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

_DOCKER_LOG_SIZE = re.compile(r"[1-9][0-9]*[kmgKMG]")


def docker_log_problems(prefix: str, variables: Mapping) -> Iterator[str]:
    """One sentence per value Docker's json-file driver would refuse; a variable not set is not judged."""
    size, files = variables.get(f"{prefix}log_max_size"), variables.get(f"{prefix}log_max_files")
    if size is not None and not (isinstance(size, str) and _DOCKER_LOG_SIZE.fullmatch(size)):
        yield f"{prefix}log_max_size is {size!r}: Docker's json-file max-size is a positive integer with k, m or g, such as 100m."
    if isinstance(files, int) and files < 1:
        yield f"{prefix}log_max_files is {files}: Docker keeps at least 1 log file."
