"""The transfer key's forced command (roles/vllm_image/files/sparkinfer-transfer): docker load or rsync into the model only.

The rsync command lines are what rsync 3.2.7 (the lab node image's, as on Ubuntu 24.04) sends to the receiving side
for `rsync -rt --copy-links --itemize-changes [--checksum] [--dry-run] [--delete] SRC/ HOST:DIR/` (model_sync's dry
run and copy), for the same push with -a, -l, -p, -o or -D, and for a pull `HOST:FILE DEST`, captured with an -e
program that printed its arguments.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "roles" / "vllm_image" / "files" / "sparkinfer-transfer"
MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    """docker and rsync that print what they were run with, first on PATH."""
    for name in ("docker", "rsync"):
        program = tmp_path / name
        program.write_text(f'#!/bin/sh\necho "ran {name} $*"\n', encoding="utf-8")
        program.chmod(0o755)
    return tmp_path


def forced(fake_bin: Path, requested: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{fake_bin}:{os.environ['PATH']}", "SSH_ORIGINAL_COMMAND": requested}
    return subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=10, check=False)


@pytest.mark.parametrize(
    "requested",
    [
        f"rsync --server -tre.iLsfxCIvu --log-format=%i . {MODEL}/",
        f"rsync --server -tre.iLsfxCIvu --log-format=%i --delete . {MODEL}/",
        f"rsync --server -trce.iLsfxCIvu --log-format=%i . {MODEL}/",
        f"rsync --server -trce.iLsfxCIvu --log-format=%i --delete . {MODEL}/",
        f"rsync --server -ntre.iLsfxCIvu --log-format=%i --delete . {MODEL}/",
        f"rsync --server -ntrce.iLsfxCIvu --log-format=%i --delete . {MODEL}/",
    ],
    ids=["copy", "delete", "checksum", "checksum-delete", "dry-run-delete", "dry-run-checksum-delete"],
)
def test_rsync_into_the_model_directory_runs_as_asked(fake_bin, requested):
    run = forced(fake_bin, requested, MODEL)
    assert (run.returncode, run.stdout) == (0, f"ran {requested}\n")


def test_docker_load_runs(fake_bin):
    run = forced(fake_bin, "docker load", MODEL)
    assert (run.returncode, run.stdout) == (0, "ran docker load\n")


OPTIONS = "options other than -r, -t, --checksum, --dry-run, --itemize-changes and --delete"


@pytest.mark.parametrize(
    ("requested", "why"),
    [
        ("id", "not rsync's receiving side"),
        ("docker load; id", "not rsync's receiving side"),
        ("docker load && touch /tmp/x", "not rsync's receiving side"),
        ("", "not rsync's receiving side"),
        ("rsync --server --sender -tre.iLsfxCIvu . /etc/hostname", OPTIONS),
        # -a, and each of its options that would make a link, set an owner or a permission, or make a device file.
        (f"rsync --server -logDtpre.iLsfxCIvu --log-format=%i . {MODEL}/", OPTIONS),
        (f"rsync --server -ltre.iLsfxCIvu . {MODEL}/", OPTIONS),
        (f"rsync --server -tpre.iLsfxCIvu . {MODEL}/", OPTIONS),
        (f"rsync --server -otre.iLsfxCIvu . {MODEL}/", OPTIONS),
        (f"rsync --server -Dtre.iLsfxCIvu . {MODEL}/", OPTIONS),
        (f"rsync --server -stre.iLsfxCIvu . {MODEL}/", OPTIONS),
        (f"rsync --server -tre.iLsfxCIvu --log-file=/tmp/x . {MODEL}/", OPTIONS),
        (f"rsync --server -tre.iLsfxCIvu --log-format=%i --log-file=/tmp/x . {MODEL}/", OPTIONS),
        (f"rsync --server -tre.iLsfxCIvu --log-format=%n%L . {MODEL}/", OPTIONS),
        ("rsync --server -tre.iLsfxCIvu . /root/.ssh/", "a destination other than"),
        (f"rsync --server -tre.iLsfxCIvu . {MODEL}/ ; id", OPTIONS),
        (f"rsync --server -tre.iLsfxCIvu --delete --delete --delete . {MODEL}/", "not rsync's receiving side"),
    ],
)
def test_anything_else_is_refused_and_nothing_runs(fake_bin, requested, why):
    run = forced(fake_bin, requested, MODEL)
    assert run.returncode == 1
    assert run.stdout == ""
    assert f"sparkinfer-transfer: refused '{requested}'" in run.stderr
    assert why in run.stderr


def test_without_a_model_directory_only_docker_load_runs(fake_bin):
    run = forced(fake_bin, f"rsync --server -tre.iLsfxCIvu . {MODEL}/")
    assert run.returncode == 1
    assert "no model directory" in run.stderr
    assert forced(fake_bin, "docker load").returncode == 0
