"""Print what a molecule scenario's platforms declare, one item per line.

Usage: python3 tools/molecule-platforms.py names|subnets extensions/molecule/<scenario>/molecule.yml
  names    the node containers and the fabric networks (extensions/molecule/_shared/create.yml makes them)
  subnets  each fabric network with its /24, "NETWORK SUBNET" (create.yml gives a network the /24 of
           its first node's address)
"""

import sys

import yaml

mode, path = sys.argv[1:3]
with open(path, encoding="utf-8") as handle:
    platforms = yaml.safe_load(handle).get("platforms", [])
networks = {}
for platform in platforms:
    for network in platform.get("networks", []):
        networks.setdefault(network["name"], network["ipv4_address"].rsplit(".", 1)[0] + ".0/24")
if mode == "names":
    print("\n".join([platform["name"] for platform in platforms] + list(networks)))
elif mode == "subnets":
    print("\n".join(f"{name} {subnet}" for name, subnet in networks.items()))
else:
    sys.exit(f"molecule-platforms: unknown mode {mode}; use names or subnets")
