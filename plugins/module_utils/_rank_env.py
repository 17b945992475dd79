# Copyright (c) sparkinfer.cluster contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the sparkinfer.cluster collection: no compatibility promise outside it.
"""What vllm_serve_extra_env may put into a rank's environment file (roles/vllm_serve/tasks/preflight.yml).

The file is docker's --env-file: one NAME=value a line, so a line break in a name or value would add variables of its
own, and an = in a name would split it elsewhere. The role combines the extra variables after its own, so a name the
role sets for its guarantees would silently undo them: VLLM_API_KEY (the key the smoke test, status and the admin box's
file hold), Ray's token authentication, the API guard's open paths and digest. Problems name the variable, never its
value (the extra variables may be secrets).

No I/O here.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

# Each name the role sets itself and may not be given, with the variable to set instead.
ROLE_SET = {
    "VLLM_API_KEY": "vllm_serve_api_key (or the key file vllm_serve_api_key_file)",
    "RAY_AUTH_MODE": "ray_cluster_auth_token (Ray's token authentication is always on)",
    "RAY_AUTH_TOKEN_PATH": "ray_cluster_auth_token_path",
    "SPARKINFER_API_OPEN_PATHS": "vllm_serve_api_open_paths",
    "SPARKINFER_API_GUARD_SHA256": "nothing: the role sets it from the guard it mounts",
}
_BAD_IN_NAME = re.compile(r"[=\r\n\x00]")
# What ends a line of an environment file: in a value it would start a variable of its own.
LINE_BREAK = re.compile(r"[\r\n\x00]")


def extra_env_problems(extra_env: Any, variable: str = "vllm_serve_extra_env") -> list[str]:
    """Each problem of the extra variables, naming the variable and the name, never the value; [] when there is none."""
    if not isinstance(extra_env, Mapping):
        return [f"{variable} must be a dictionary of names to values, got {type(extra_env).__name__}"]
    problems = []
    for name, value in extra_env.items():
        shown = json.dumps(str(name))
        if _BAD_IN_NAME.search(str(name)):
            problems.append(f"{variable} has the variable name {shown} (holds = or a line break)")
        elif name in ROLE_SET:
            problems.append(f"{variable} sets {name}, which the role sets itself: set {ROLE_SET[name]} instead")
        if isinstance(value, str) and LINE_BREAK.search(value):
            problems.append(f"{variable} has a line break in the value of {shown}")
    return problems
