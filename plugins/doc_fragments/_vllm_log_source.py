# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.

from __future__ import annotations


class ModuleDocFragment:
    # Where a module reads a vLLM log from, and the facts it returns.
    DOCUMENTATION = r"""
options:
  path:
    description:
      - A vLLM log file on the target.
      - Exactly one source of the log is required.
    type: path
  container:
    description:
      - A Docker container on the target whose log (C(docker logs --timestamps), both streams in
        order) is vLLM's.
    type: str
  docker_path:
    description: The C(docker) executable used with O(container).
    type: str
    default: docker
  tail_lines:
    description: How many of the log's last lines to return in RV(tail), for context. At most 200.
    type: int
    default: 20
"""
