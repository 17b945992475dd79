#!/usr/bin/env bash
# Tear the lab down: node containers, their Docker volumes, the lab networks and the written
# inventory. The cached node image is kept (lab/node-image/build.sh reuses it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lab.conf
. "$here/lab.conf"

mapfile -t nodes < <(docker ps -aq --filter label=sparkinfer-lab=1)
[ ${#nodes[@]} -eq 0 ] || docker rm -f "${nodes[@]}" >/dev/null
mapfile -t volumes < <(docker volume ls -q --filter "name=^${SPARKINFER_LAB_NODE_PREFIX}-[0-9]+-docker$")
[ ${#volumes[@]} -eq 0 ] || docker volume rm "${volumes[@]}" >/dev/null
for net in "$SPARKINFER_LAB_FABRIC_NET" "$SPARKINFER_LAB_MGMT_NET"; do
  docker network inspect "$net" >/dev/null 2>&1 && docker network rm "$net" >/dev/null
done
rm -f "$repo/inventories/lab/hosts.yml"
echo "lab: down (${#nodes[@]} node(s) removed)" >&2
