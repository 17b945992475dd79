#!/usr/bin/env bash
# make mutation: mutate the safety and gate logic (tools/mutation/pyproject.toml lists the files) one change at a
# time, run the unit tests that reach each mutant, and report the share killed per file against
# tools/mutation/equivalent.yml (tools/mutation/report.py). Takes long (about half an hour on 2 cores); not part of
# make test.
#   tools/mutation/run.sh                 every mutant, in a stage built afresh (.cache/mutation)
#   tools/mutation/run.sh 'NAME-GLOB'...  only the mutants named (mutmut's names, globs allowed), in the stage of the
#                                         last run with this checkout's tests copied in: to see a new test kill them
# SPARKINFER_MUTATION_STAGE moves the stage (default .cache/mutation), e.g. to try tests on a copy of it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
venv=$("$repo/tools/venv.sh" mutation)
stage=${SPARKINFER_MUTATION_STAGE:-$repo/.cache/mutation}
collection=$stage/ansible_collections/sparkinfer/cluster

if [ $# -eq 0 ] || [ ! -d "$stage/mutants" ]; then
  rm -rf "$stage"
fi
mkdir -p "$collection"
# rsync keeps the files' times: mutmut mutates again only the sources whose time changed.
(cd "$repo" && git ls-files -z --cached --others --exclude-standard) |
  rsync -a --from0 --files-from=- "$repo/" "$collection/"
cp "$repo/tools/mutation/pyproject.toml" "$stage/pyproject.toml"

cd "$stage"
# The tests that run a playbook in a subprocess find the collection here, unmutated (mutants reach in-process
# tests only).
export ANSIBLE_COLLECTIONS_PATH=$stage
start=$(date +%s)
if ! "$venv/bin/mutmut" run "$@" >"$stage/run.log" 2>&1; then
  tr '\r' '\n' <"$stage/run.log" | grep -v '^\S* *\(Generating mutants\|Running stats\|Running clean tests\)' | tail -40
  echo "mutation: mutmut run failed (whole output: $stage/run.log)" >&2
  exit 1
fi
echo "mutmut run: $(( $(date +%s) - start ))s"
"$venv/bin/python" "$repo/tools/mutation/report.py" "$repo/tools/mutation/equivalent.yml"
