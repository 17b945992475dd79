#!/usr/bin/env bash
# Prepare this machine (Debian/Ubuntu, as root) for the lab and the tests: Docker engine, debootstrap and the tools
# the tests run from the OS packages when absent, and the Docker daemon started when not running.
# Safe to run again: it only acts on what is missing.
set -euo pipefail

need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v ssh >/dev/null || need+=(openssh-client)
# model_sync's unit tests copy with the real rsync between two directories.
command -v rsync >/dev/null || need+=(rsync)
# `ansible-test sanity` lints the shell scripts only where shellcheck is installed.
command -v shellcheck >/dev/null || need+=(shellcheck)
# The e2e scenario scrapes the lab's metrics targets with a real Prometheus server, as docs/metrics.md configures it.
command -v prometheus >/dev/null || need+=(prometheus)
if [ ${#need[@]} -gt 0 ]; then
  echo "host-setup: installing ${need[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
  if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl start docker
  else
    echo "host-setup: starting dockerd (log: /var/log/sparkinfer-dockerd.log)" >&2
    setsid dockerd >/var/log/sparkinfer-dockerd.log 2>&1 < /dev/null &
  fi
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  docker info >/dev/null 2>&1 || { echo "host-setup: the Docker daemon did not answer within 60 s" >&2; tail -n 20 /var/log/sparkinfer-dockerd.log >&2 || true; exit 1; }
fi
echo "host-setup: docker $(docker version --format '{{.Server.Version}}') ready" >&2
