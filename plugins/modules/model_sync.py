#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: model_sync
short_description: Push a model directory to another node with rsync over SSH, sending only the files that differ
version_added: 0.1.0
description:
  - Runs on the node that holds the model (delegate the task to it) and pushes O(src) to O(dest) on O(dest_host) with
    C(rsync -rt --copy-links) over the SSH command O(ssh_argv), sending files and directories with their modification
    times, each link replaced by what it points to (a Hugging Face cache snapshot's links to its blobs arrive as the
    files).
  - Owners, groups, permissions and device files are not sent. The other node's account owns what it receives, with
    its own default modes, and its forced command can refuse every option that would set more.
  - A dry run first asks rsync which files the other node lacks or holds otherwise (another size or modification
    time; with O(checksum), other content) and which it holds that this node does not; rsync copies only when a file
    differs, so C(changed) says exactly whether a file was sent, and in check mode the dry run says what would be.
  - Names only the other node holds are someone's (RV(extra)); vLLM may still load them (an extra C(*.safetensors) is read
    as weights). With O(delete_extra) they are deleted; otherwise they are reported and left alone.
  - An attribute that differs with nothing to send (a directory's time) is not a reason to copy, as it is not the
    model's content.
  - After a copy a second dry run must find nothing left to send, or the module fails saying so.
  - rsync runs under C(timeout(1)), stopped after O(timeout) seconds; a failure gives rsync's own message and exit
    status.
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
attributes:
  check_mode:
    support: full
    details:
      - The dry run runs in check mode too (it writes nothing); the copy does not.
  diff_mode:
    support: none
options:
  src:
    description: The model directory on this node.
    type: path
    required: true
  dest:
    description:
      - The directory on the other node; O(src) when not given.
      - Taken as written, as a path of the other node; this node expands no C(~) or environment variable in it, as
        those would name this node's home and values.
    type: str
  dest_host:
    description: The other node's address, as O(ssh_argv) reaches it.
    type: str
    required: true
  dest_user:
    description: The account on the other node that the SSH key logs in as.
    type: str
    required: true
  ssh_argv:
    description:
      - The SSH command rsync runs to reach the other node (rsync's C(-e)), without the host, for example
        C([ssh, -i, KEY, -o, BatchMode=yes]). Its words are joined with spaces, so none may hold a space.
    type: list
    elements: str
    required: true
  checksum:
    description: Compare files by content (C(rsync --checksum)) instead of size and modification time.
    type: bool
    default: false
  delete_extra:
    description: Delete what only the other node holds in O(dest) (C(rsync --delete)).
    type: bool
    default: false
  timeout:
    description: Seconds each rsync run may take before it is stopped.
    type: int
    default: 3600
notes:
  - The other node's side of a restricted key must let rsync's receiving side run with C(-n) and C(--log-format=%i)
    (the dry run and its itemized changes) besides C(-r), C(-t), C(--checksum) and C(--delete).
seealso:
  - name: rsync
    description: The C(--itemize-changes) output the module reads.
    link: https://download.samba.org/pub/rsync/rsync.1
"""

EXAMPLES = r"""
- name: Copy the model to each other node over the fabric, where a file differs
  sparkinfer.cluster.model_sync:
    src: /opt/sparkinfer/models/Qwen3.5-122B-A10B-FP8
    dest_host: 192.168.100.11
    dest_user: sparkops
    ssh_argv: [ssh, -i, /root/.ssh/sparkinfer_transfer_ed25519, -o, BatchMode=yes]
  delegate_to: spark-1
  register: __model_copy

- name: Fail on files the other node holds of its own
  ansible.builtin.assert:
    that: __model_copy.extra | length == 0
    fail_msg: "{{ __model_copy.extra | join(', ') }} are only on the other node"
"""

RETURN = r"""
sent:
  description: The files rsync sent (in check mode, would send), relative to O(src).
  returned: always
  type: list
  elements: str
  sample: [config.json, model-00001-of-00024.safetensors]
extra:
  description: What only the other node holds in O(dest) (directories end with C(/)), after this run.
  returned: always
  type: list
  elements: str
  sample: [notes.txt]
deleted:
  description: What O(delete_extra) deleted (in check mode, would delete).
  returned: always
  type: list
  elements: str
  sample: []
cmd:
  description: The last rsync command run, under C(timeout).
  returned: always
  type: list
  elements: str
"""

import time
from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import bounded_argv, run_bounded, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._rsync_itemize import PushPlan, read_itemized

# What the receiving node's forced command (roles/vllm_image/files/sparkinfer-transfer) lets through, and no more.
_PUSH_OPTIONS = ("-rt", "--copy-links")


class ModelSync:
    def __init__(self, module: AnsibleModule, clock: Callable[[], float]) -> None:
        self.module = module
        self.clock = clock
        params = module.params
        if params["timeout"] <= 0:
            module.fail_json(msg=f"timeout is {params['timeout']}: give the seconds an rsync run may take, above 0")
        if any(" " in word for word in params["ssh_argv"]) or not params["ssh_argv"]:
            module.fail_json(msg=f"ssh_argv is {params['ssh_argv']}: give the SSH command as words without spaces")
        self.timeout_path = module.get_bin_path("timeout", required=True)
        self.rsync = module.get_bin_path("rsync", required=True)
        dest = (params["dest"] or params["src"]).rstrip("/")
        self.ends = [params["src"].rstrip("/") + "/", f"{params['dest_user']}@{params['dest_host']}:{dest}/"]
        self.compare = ["--checksum"] if params["checksum"] else []
        # Set by every rsync_run, the first thing main does.
        self.cmd: list[str]

    def rsync_run(self, options: list[str]) -> PushPlan:
        argv = [self.rsync, *_PUSH_OPTIONS, "--itemize-changes", *self.compare, *options, "-e", " ".join(self.module.params["ssh_argv"]), *self.ends]
        seconds = self.module.params["timeout"]
        rc, out, err, stopped = run_bounded(self.module.run_command, self.timeout_path, seconds, argv, self.clock, environ_update={"LC_ALL": "C"})
        self.cmd = bounded_argv(self.timeout_path, seconds, argv)
        if stopped:
            self.module.fail_json(msg=timeout_message(argv, seconds), rc=rc, cmd=self.cmd)
        if rc != 0:
            self.module.fail_json(msg=f"rsync to {self.ends[1]} failed with rc={rc}: {err.strip() or out.strip()}", rc=rc, cmd=self.cmd)
        return read_itemized(out)

    def main(self) -> None:
        delete_extra = self.module.params["delete_extra"]
        # --delete in a dry run deletes nothing: it lists what only the other node holds.
        plan = self.rsync_run(["--dry-run", "--delete"])
        deleted = list(plan.extra) if delete_extra else []
        result = {"changed": bool(plan.sent or deleted), "sent": list(plan.sent), "extra": [] if delete_extra else list(plan.extra), "deleted": deleted}
        if result["changed"] and not self.module.check_mode:
            self.rsync_run(["--delete"] if delete_extra else [])
            after = self.rsync_run(["--dry-run", "--delete"])
            left = [*after.sent, *(after.extra if delete_extra else ())]
            if left:
                self.module.fail_json(
                    msg=f"{self.ends[1]} still differs from {self.ends[0]} after the copy: {', '.join(left)}",
                    cmd=self.cmd,
                    **result,
                )
            result["extra"] = list(after.extra)
        self.module.exit_json(cmd=self.cmd, **result)


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "src": {"type": "path", "required": True},
            "dest": {"type": "str"},
            "dest_host": {"type": "str", "required": True},
            "dest_user": {"type": "str", "required": True},
            "ssh_argv": {"type": "list", "elements": "str", "required": True},
            "checksum": {"type": "bool", "default": False},
            "delete_extra": {"type": "bool", "default": False},
            "timeout": {"type": "int", "default": 3600},
        },
        supports_check_mode=True,
    )
    ModelSync(module, clock).main()


if __name__ == "__main__":
    main()
