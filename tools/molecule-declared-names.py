"""Print the Docker containers and networks a molecule scenario declares, one name per line.

Usage: python3 tools/molecule-declared-names.py extensions/molecule/<scenario>/molecule.yml
"""

import sys

import yaml

with open(sys.argv[1], encoding="utf-8") as handle:
    platforms = yaml.safe_load(handle).get("platforms", [])
for platform in platforms:
    print(platform["name"])
    for network in platform.get("docker_networks", []):
        print(network["name"])
