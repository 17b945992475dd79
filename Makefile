# The one entry point for developers, CI (.ci/run) and the README.
#   make test   the whole test suite, gates cheapest first, with its wall time
#   make site   bring the lab up and run playbooks/site.yml against it
#   make mutation  mutation testing of the safety and gate logic (long; not part of make test)
# Both set up what they need (Docker engine, virtualenv, lab images) by themselves.
SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
REPO := $(CURDIR)
VENV := $(REPO)/.venv
export PATH := $(VENV)/bin:$(PATH)
export ANSIBLE_CONFIG := $(REPO)/ansible.cfg
export ANSIBLE_COLLECTIONS_PATH := $(REPO)/.cache/collections
export ANSIBLE_FORCE_COLOR := 0

.PHONY: test site setup host venv collection yamllint ansible-lint python-lint sanity units build \
        lab-image lab-vllm-image lab-seeds lab-up lab-down molecule molecule-and-integration integration changelog clean \
        mutation

test:
	tools/test-all.sh

site: setup lab-up lab-vllm-image
	lab/seed-head.sh spark-1
	ansible-playbook -i inventories/lab playbooks/site.yml

setup: host venv collection

host:
	tools/host-setup.sh

venv:
	tools/venv.sh >/dev/null

collection:
	tools/collection-link.sh

yamllint:
	yamllint --strict .

ansible-lint:
	ansible-lint

changelog:
	antsibull-changelog lint

python-lint:
	ruff format --check plugins tests extensions bench tools lab
	ruff check plugins tests extensions bench tools lab
	mypy plugins tests/unit

sanity:
	tools/sanity.sh

units:
	pytest --cov --cov-report=term-missing tests/unit

# mutmut over the files tools/mutation/pyproject.toml lists, in its own virtualenv; the share killed per file.
mutation: host
	tools/mutation/run.sh

build:
	tools/build-collection.sh

lab-image:
	lab/node-image/build.sh >/dev/null

# vLLM's CPU build with Ray, for the scenarios that serve or move a real vLLM image.
lab-vllm-image:
	lab/vllm-image/build.sh >/dev/null

# The first seed of a lab node (the image store kept per image ID, the tiny model), before the lanes.
lab-seeds: lab-image lab-vllm-image
	lab/prime-seeds.sh

lab-up:
	lab/up.sh

lab-down:
	lab/down.sh

molecule: lab-seeds
	tools/molecule-all.sh

# Both, integration in the molecule lane that ends first (what make test runs).
molecule-and-integration: lab-seeds
	tools/molecule-all.sh --with-integration

# The modules against a real vLLM server (the lab vLLM image, tiny generated model) on loopback.
integration: lab-vllm-image
	model=$$(lab/tiny-model/generate.sh sparkinfer-lab-vllm:latest) \
	  && SPARKINFER_TINY_MODEL=$$model SPARKINFER_LAB_VLLM_IMAGE=sparkinfer-lab-vllm:latest pytest -v -s -p no:cacheprovider tests/integration

clean: lab-down
	rm -rf .cache .ansible .pytest_cache .mypy_cache .ruff_cache .coverage sparkinfer-cluster-*.tar.gz
