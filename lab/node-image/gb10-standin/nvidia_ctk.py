"""GB10 stand-in for nvidia-ctk (see SOURCES.md), run by /usr/bin/nvidia-ctk.

It knows one command, `nvidia-ctk runtime configure --runtime=docker`, and does what the real one
does with it: register the `nvidia` runtime in /etc/docker/daemon.json, keeping every other key.
Anything else it refuses (exit 2) rather than invent.
"""

import json
import os
import sys

DAEMON_JSON = "/etc/docker/daemon.json"

if sys.argv[1:] != ["runtime", "configure", "--runtime=docker"]:
    sys.exit(f"nvidia-ctk stand-in: only `runtime configure --runtime=docker` is stood in for, not {sys.argv[1:]}")

config = {}
if os.path.exists(DAEMON_JSON):
    with open(DAEMON_JSON, encoding="utf-8") as handle:
        config = json.load(handle)
config.setdefault("runtimes", {})["nvidia"] = {"args": [], "path": "nvidia-container-runtime"}
with open(DAEMON_JSON, "w", encoding="utf-8") as handle:
    handle.write(json.dumps(config, indent=4, sort_keys=True))
