"""A real Prometheus server (Debian's package, tools/host-setup.sh) on the admin box, configured as docs/metrics.md says.

The scrape config is the docs' own block for a /metrics behind the API key, with its two paths pointed at the test's
files: the docs are what the suite runs.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from chain_lab import REPO

DOCS = REPO / "docs" / "metrics.md"
DOCS_KEY_FILE = "/etc/prometheus/sparkinfer-vllm-api-key"
DOCS_TARGETS_FILE = "/etc/prometheus/file_sd/sparkinfer-targets.json"
PORT = 9391


def docs_scrape_config(key_file: Path, targets_file: Path) -> str:
    """The docs' YAML block that gives Prometheus the API key, its paths replaced, scraping every second."""
    blocks = re.findall(r"```yaml\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.DOTALL)
    (keyed,) = [block for block in blocks if DOCS_KEY_FILE in block]
    keyed = keyed.replace(DOCS_KEY_FILE, str(key_file)).replace(DOCS_TARGETS_FILE, str(targets_file))
    return "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n" + keyed


@contextmanager
def prometheus(workdir: Path, targets_file: Path, api_key: str) -> Iterator[None]:
    """Prometheus scraping the targets file until the block ends."""
    key_file = workdir / "api-key"
    key_file.write_text(api_key, encoding="utf-8")
    config = workdir / "prometheus.yml"
    config.write_text(docs_scrape_config(key_file, targets_file), encoding="utf-8")
    checked = subprocess.run(["promtool", "check", "config", str(config)], capture_output=True, text=True, timeout=60, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    server = subprocess.Popen(
        ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}", f"--web.listen-address=127.0.0.1:{PORT}"],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "prometheus.log").open("w"),
    )
    try:
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


def active_targets() -> list[dict]:
    with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/api/v1/targets?state=active", timeout=10) as answer:
        return json.loads(answer.read())["data"]["activeTargets"]


def targets_once_scraped(count: int, timeout: float = 60) -> list[dict]:
    """The active targets once there are count of them and each was scraped (up or down), or the last seen."""
    deadline = time.monotonic() + timeout
    seen: list[dict] = []
    while time.monotonic() < deadline:
        try:
            seen = active_targets()
        except OSError:
            seen = []
        if len(seen) == count and all(target["health"] != "unknown" for target in seen):
            break
        time.sleep(1)
    return seen
