#!/usr/bin/env bash
# Capture the doctor's readings of the converged e2e pair for the unit tests' corpus
# (tests/unit/plugins/filter/fixtures/doctor/<case>/<node>.json): doctor.yml's plays up to its judgement (which fails the
# run on an error finding), then each node's reading kept as JSON. Break the pair first as the case needs; the findings
# each case must give are written by hand in tests/unit/plugins/filter/test_doctor.py after reading the report doctor.yml prints.
# Usage: capture.sh INVENTORY OUTPUT_DIR [ansible-playbook options, such as -e ray_cluster_state=started]
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
inventory=$1 out=$2
shift 2
mkdir -p "$out"
# Beside doctor.yml, so that its tasks/ paths resolve.
playbook=$(mktemp "$repo/playbooks/.doctor-capture.XXXXXX.yml")
trap 'rm -f "$playbook"' EXIT
python3 - "$repo/playbooks/doctor.yml" "$out" >"$playbook" <<'PY'
import json, sys, yaml
plays = [play for play in yaml.safe_load(open(sys.argv[1])) if play["name"] != "Judge every cluster"]
plays.append({
    "name": "Keep each node's reading",
    "hosts": "{{ sparkinfer_targets | default('sparkinfer_nodes') }}",
    "gather_facts": False,
    "tasks": [{
        "name": "Write the reading as JSON on the admin box",
        "ansible.builtin.copy": {"content": "{{ __doctor_reading | to_nice_json }}\n", "dest": sys.argv[2] + "/{{ inventory_hostname }}.json", "mode": "0644"},
        "delegate_to": "localhost",
    }],
})
print(json.dumps(plays))
PY
ansible-playbook -i "$inventory" "$playbook" "$@"
