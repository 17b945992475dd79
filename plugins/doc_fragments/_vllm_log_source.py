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
      - It must be a regular file; a directory, a FIFO or a device is refused.
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
  command_timeout:
    description:
      - Seconds each C(docker) command run for O(container) (C(docker logs), C(docker inspect)) may take
        before it is stopped, with its child processes, and the module fails naming it; 1 or more.
      - A whole log of several gigabytes can take minutes to read.
    type: int
    default: 300
  tail_lines:
    description: How many of the log's last lines to return in RV(tail), for context; from 0 to 200.
    type: int
    default: 20
notes:
  - Bytes of the log that are not UTF-8 are replaced by U+FFFD.
  - A log line longer than 65536 characters keeps only its start, followed by C([... N more characters left out]).
  - O(container) needs C(timeout) (coreutils) and C(sh) on the target. Docker writes the log into temporary files in the
    module's temporary directory on the target, as large as the part of the log read (all of it at first).
"""
