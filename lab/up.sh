#!/usr/bin/env bash
# Bring up the lab: N node containers (default 2: spark-1, spark-2) that run systemd and their
# own Docker engine, on two lab-owned internal networks (mgmt and fabric) with stable addresses,
# reachable by SSH as the deploy user; then write inventories/lab/hosts.yml.
# Idempotent: running nodes from the current image are kept as they are.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lab.conf
. "$here/lab.conf"

image=$("$here/node-image/build.sh")
mkdir -p "$SPARKINFER_LAB_STATE"
key="$SPARKINFER_LAB_STATE/id_ed25519"
[ -f "$key" ] || ssh-keygen -q -t ed25519 -N '' -C sparkinfer-lab -f "$key"

ensure_network() {
  local name=$1 subnet=$2.0/24 mtu=$3 actual
  if actual=$(docker network inspect -f '{{range .IPAM.Config}}{{.Subnet}}{{end}} {{.Internal}} {{index .Options "com.docker.network.driver.mtu"}}' "$name" 2>/dev/null); then
    if [ "$actual" != "$subnet true $mtu" ]; then
      echo "lab: network $name exists as '$actual', expected '$subnet true $mtu': run lab/down.sh first" >&2
      exit 1
    fi
  else
    docker network create --internal --subnet "$subnet" --opt com.docker.network.driver.mtu="$mtu" --label sparkinfer-lab=1 "$name" >/dev/null
    echo "lab: created network $name ($subnet, internal, MTU $mtu)" >&2
  fi
}

start_node() {
  local i=$1 name
  name=$(lab_node_name "$i")
  docker run -d --name "$name" --hostname "$name" --label sparkinfer-lab=1 \
    --network "$SPARKINFER_LAB_MGMT_NET" --ip "$(lab_mgmt_ip "$i")" "${LAB_NODE_RUN_OPTIONS[@]}" \
    -v "$name-docker:/var/lib/docker" \
    "$image" >/dev/null
  docker network connect --ip "$(lab_fabric_ip "$i")" "$SPARKINFER_LAB_FABRIC_NET" "$name"
  echo "lab: started $name" >&2
}

ensure_node() {
  local i=$1 name current
  name=$(lab_node_name "$i")
  current=$(docker inspect -f '{{.Config.Image}} {{.State.Running}}' "$name" 2>/dev/null || true)
  case "$current" in
    "$image true") ;;
    "$image false") docker start "$name" >/dev/null; echo "lab: restarted $name" >&2 ;;
    "") start_node "$i" ;;
    *) docker rm -f "$name" >/dev/null; echo "lab: $name ran another image, recreating" >&2; start_node "$i" ;;
  esac
}

authorize_key() {
  local name=$1 home="/home/$SPARKINFER_LAB_USER"
  docker exec -i "$name" sh -c "install -d -m 0700 -o $SPARKINFER_LAB_USER -g $SPARKINFER_LAB_USER $home/.ssh &&
    cat > $home/.ssh/authorized_keys && chown $SPARKINFER_LAB_USER: $home/.ssh/authorized_keys && chmod 0600 $home/.ssh/authorized_keys" <"$key.pub"
}

# The fabric carries jumbo frames, as the ConnectX-7 link does with MTU 9000.
ensure_network "$SPARKINFER_LAB_MGMT_NET" "$SPARKINFER_LAB_MGMT_SUBNET" 1500
ensure_network "$SPARKINFER_LAB_FABRIC_NET" "$SPARKINFER_LAB_FABRIC_SUBNET" 9000
for i in $(seq 1 "$SPARKINFER_LAB_NODES"); do ensure_node "$i"; done

known_hosts="$SPARKINFER_LAB_STATE/known_hosts"
: >"$known_hosts.new"
for i in $(seq 1 "$SPARKINFER_LAB_NODES"); do
  name=$(lab_node_name "$i")
  lab_wait_node_ready "$name"
  authorize_key "$name"
  echo "$(lab_mgmt_ip "$i") $(docker exec "$name" cat /etc/ssh/ssh_host_ed25519_key.pub | cut -d' ' -f1,2)" >>"$known_hosts.new"
done
mv "$known_hosts.new" "$known_hosts"

"$here/write-inventory.sh" "$key" "$known_hosts" >"$repo/inventories/lab/hosts.yml.new"
mv "$repo/inventories/lab/hosts.yml.new" "$repo/inventories/lab/hosts.yml"

for i in $(seq 1 "$SPARKINFER_LAB_NODES"); do
  ssh -i "$key" -o UserKnownHostsFile="$known_hosts" -o BatchMode=yes -o ConnectTimeout=5 \
    "$SPARKINFER_LAB_USER@$(lab_mgmt_ip "$i")" true \
    || { echo "lab: SSH to $(lab_node_name "$i") at $(lab_mgmt_ip "$i") failed" >&2; exit 1; }
done
echo "lab: $SPARKINFER_LAB_NODES node(s) up; inventory: inventories/lab/" >&2
