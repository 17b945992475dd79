#!/usr/bin/env bash
# Run `ansible-test sanity` (Python 3.11) on a copy of the collection placed under
# ansible_collections/sparkinfer/cluster (ansible-test needs that path), with no ignore files.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
python=3.11

# ansible-test bootstraps pip into its virtualenvs with a script it downloads from a host these
# machines cannot reach; put our stand-in where it looks for a cached copy, with the CA bundle
# this machine's pip trusts (empty where pip is not configured with one).
pip_version=$(python3 -c 'import re, sys; print(re.search(r"pip=.(\d+\.\d+)", open(sys.argv[1]).read()).group(1))' \
  "$("$repo/.venv/bin/python" -c 'import ansible_test, os; print(os.path.join(os.path.dirname(ansible_test.__file__), "_internal", "python_requirements.py"))')")
mkdir -p ~/.ansible/test/cache
ca_bundle=${PIP_CERT:-$("$repo/.venv/bin/pip" config get global.cert 2>/dev/null || true)}
sed "s|@CA_BUNDLE@|$ca_bundle|" "$repo/tools/ansible-test-get-pip.py" >~/.ansible/test/cache/"get_pip_${pip_version//./_}.py"

work=$(mktemp -d /tmp/sparkinfer-sanity.XXXXXX)
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/sparkinfer/cluster"
mkdir -p "$dest"
# Only what git tracks or would track: the file set of a clean clone (plus uncommitted work).
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 -I{} sh -c 'if test -e "{}"; then printf "%s\0" "{}"; fi' | tar --null -T - -cf -) | tar -C "$dest" -xf -
if compgen -G "$dest/tests/sanity/ignore-*.txt" >/dev/null; then
  echo "sanity: ignore files are not allowed: $(ls "$dest"/tests/sanity/ignore-*.txt)" >&2
  exit 1
fi
cd "$dest"
git init -q && git add -A
"$repo/.venv/bin/ansible-test" sanity --python "$python" --venv --color no "$@"
