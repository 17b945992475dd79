#!/usr/bin/env bash
# Print the lab inventory (inventories/lab/hosts.yml) for the running lab nodes: the first node
# is the head, the others are workers. The interface names are read from each node, not assumed.
# Usage: write-inventory.sh SSH_KEY KNOWN_HOSTS
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lab.conf
. "$here/lab.conf"
key=$1
known_hosts=$2

iface_with_ip() { docker exec "$1" ip -o -4 addr show to "$2" | awk '{ print $2; exit }'; }

host_block() {
  local i=$1 name mgmt fabric
  name=$(lab_node_name "$i")
  mgmt=$(iface_with_ip "$name" "$(lab_mgmt_ip "$i")")
  fabric=$(iface_with_ip "$name" "$(lab_fabric_ip "$i")")
  if [ -z "$mgmt" ] || [ -z "$fabric" ]; then
    echo "write-inventory: $name lacks its lab addresses" >&2
    exit 1
  fi
  cat <<HOST
            $name:
              ansible_host: $(lab_mgmt_ip "$i")
              lab_mgmt_interface: $mgmt
              lab_fabric_interface: $fabric
              lab_fabric_ip: $(lab_fabric_ip "$i")
              # For the netplan file on the stand-in twins (checked, not applied, in the lab).
              nccl_network_fabric_addresses:
                - 192.168.180.$((10 + i))/24
                - 192.168.181.$((10 + i))/24
HOST
}

cat <<HEAD
---
# Written by lab/up.sh for the running lab; do not edit (lab differences live in group_vars/).
all:
  vars:
    ansible_user: $SPARKINFER_LAB_USER
    ansible_ssh_private_key_file: $key
    ansible_ssh_common_args: -o UserKnownHostsFile=$known_hosts -o BatchMode=yes
  children:
    sparkinfer_nodes:
      children:
        sparkinfer_head:
          hosts:
$(host_block 1)
HEAD
if [ "$SPARKINFER_LAB_NODES" -gt 1 ]; then
  echo "        sparkinfer_workers:"
  echo "          hosts:"
  for i in $(seq 2 "$SPARKINFER_LAB_NODES"); do host_block "$i"; done
fi
