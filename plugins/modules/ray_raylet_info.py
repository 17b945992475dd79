#!/usr/bin/python
# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: ray_raylet_info
short_description: Read the Ray raylet running in a container on this node, with the node id it registered with
version_added: 0.1.0
description:
  - Runs C(docker top CONTAINER -o pid,args) (ps run by the node's Docker engine, so nothing is needed in the image) and
    returns whether the container runs, and its Ray raylet, the process whose executable is Ray's
    C(.../ray/core/src/ray/raylet/raylet), with the node id (C(--node_id)) and address (C(--node_ip_address)) its
    arguments name.
  - The node id is how a node is known in Ray's cluster when the state API (the dashboard) gives no IPs, and a container
    whose raylet is gone (or registered with an earlier head) still runs C(ray start --block).
  - A container that does not exist or does not run is a reading, not an error (RV(container_exists), RV(container_running)).
    A Docker daemon that fails or does not answer within O(command_timeout) fails the module, naming the command.
  - "Read-only: C(changed) is always false."
author:
  - sparkinfer.cluster developers (@sparkinfer)
extends_documentation_fragment:
  - sparkinfer.cluster._attributes
  - sparkinfer.cluster._attributes.INFO_MODULE
options:
  container:
    description: The Docker container that runs C(ray start) on this node (the head's or a worker's).
    type: str
    required: true
  docker_path:
    description: The C(docker) client executable, a name looked up on the PATH or an absolute path.
    type: str
    default: docker
  command_timeout:
    description:
      - Seconds C(docker top) may run; it runs under C(timeout(1)) from coreutils, which stops the C(docker) client then.
    type: int
    default: 60
notes:
  - C(docker top) needs access to the Docker socket; run the module as root (C(become)) or as a member of the C(docker) group.
seealso:
  - module: sparkinfer.cluster.ray_cluster_info
    description: The head's view of the whole cluster, which the node ids read here are checked against.
"""

EXAMPLES = r"""
- name: Read this node's raylet
  sparkinfer.cluster.ray_raylet_info:
    container: sparkinfer-ray
  register: __raylet

- name: Wait until the raylet runs in this node's Ray container
  sparkinfer.cluster.ray_raylet_info:
    container: sparkinfer-ray
  register: __raylet
  until: __raylet.raylet is not none
  retries: 40
  delay: 3
"""

RETURN = r"""
container_exists:
  description: Whether Docker has a container of that name.
  returned: always
  type: bool
  sample: true
container_running:
  description: Whether it runs (C(docker top) answers only for a running container).
  returned: always
  type: bool
  sample: true
raylet:
  description: The raylet among the container's processes; null when the container does not run or has no raylet.
  returned: always
  type: dict
  contains:
    pid:
      description: Its PID on the node.
      type: int
      returned: success
      sample: 23831
    node_id:
      description: The node id it registered with (C(--node_id)), or null when its arguments do not say.
      type: str
      returned: success
      sample: b172939baed8fa565a5707f286d055da070f16eb7968c9d0722f7f33
    node_ip_address:
      description: The address it registered with (C(--node_ip_address)), or null when its arguments do not say.
      type: str
      returned: success
      sample: 192.168.177.11
cmd:
  description: The command that ran, an argument vector with the C(timeout) wrapper.
  returned: always
  type: list
  elements: str
"""

import time
from collections.abc import Callable

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.sparkinfer.cluster.plugins.module_utils._bounded_command import bounded_argv, timed_out, timeout_message
from ansible_collections.sparkinfer.cluster.plugins.module_utils._raylet import DockerTopParseError, parse_docker_top, raylet_of

# What the Docker daemon answers `docker top` for a container that is not there, or not running.
_NO_CONTAINER = "No such container"
_NOT_RUNNING = "is not running"


def main(clock: Callable[[], float] = time.monotonic) -> None:
    module = AnsibleModule(
        argument_spec={
            "container": {"type": "str", "required": True},
            "docker_path": {"type": "str", "default": "docker"},
            "command_timeout": {"type": "int", "default": 60},
        },
        supports_check_mode=True,
    )
    params = module.params
    if params["command_timeout"] <= 0:
        module.fail_json(msg=f"command_timeout must be a positive number of seconds, not {params['command_timeout']}")
    docker = module.get_bin_path(params["docker_path"])
    if docker is None:
        module.fail_json(msg=f"{params['docker_path']} not found: the Docker client is not installed")
    argv = [docker, "top", params["container"], "-o", "pid,args"]
    cmd = bounded_argv(module.get_bin_path("timeout", required=True), params["command_timeout"], argv)
    started = clock()
    rc, out, err = module.run_command(cmd, environ_update={"LC_ALL": "C"})
    if timed_out(rc, clock() - started, params["command_timeout"]):
        module.fail_json(msg=f"{timeout_message(argv, params['command_timeout'])}: the Docker daemon does not answer", cmd=cmd)
    if rc != 0:
        if _NO_CONTAINER in err or _NOT_RUNNING in err:
            module.exit_json(changed=False, container_exists=_NO_CONTAINER not in err, container_running=False, raylet=None, cmd=cmd)
        error = (err.strip() or out.strip() or f"rc {rc}").splitlines()[-1][:400]
        module.fail_json(msg=f"`docker top {params['container']}` failed: {error}: check that the Docker daemon runs", rc=rc, stderr=err, cmd=cmd)
    try:
        raylet = raylet_of(parse_docker_top(out))
    except DockerTopParseError as exc:
        module.fail_json(msg=f"cannot read what `docker top {params['container']}` printed: {exc}", stdout=out, cmd=cmd)
    module.exit_json(changed=False, container_exists=True, container_running=True, raylet=raylet.as_dict() if raylet else None, cmd=cmd)


if __name__ == "__main__":
    main()
