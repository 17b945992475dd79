#!/usr/bin/env bash
# Run a command with Linux process accounting on and print where the machine's CPU went, by command name
# (tools/cpu-by-command.py): for instance how much of the suite is Ansible's own work, on the admin box and in the
# nodes, and how much is vLLM, Ray or Docker. Accounting is machine-wide: whatever else runs meanwhile is counted.
# Needs root and the acct package (installed when missing). Usage: tools/cpu-profile.sh COMMAND [ARG...]
set -euo pipefail
if [ $# -eq 0 ]; then
  echo "usage: $0 COMMAND [ARG...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v accton >/dev/null; then
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -q acct >/dev/null
fi
record=$(mktemp -t cpu-profile.XXXXXX)
accton "$record" >/dev/null
trap 'accton off >/dev/null' EXIT
set +e
"$@"
code=$?
set -e
accton off >/dev/null
trap - EXIT
python3 "$here/cpu-by-command.py" "$record" 30
echo "cpu-profile: the records are in $record"
exit "$code"
