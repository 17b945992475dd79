"""Every test a document cites as its proof exists: a test function (a name cut short with `...` matches its start) or a
test file. Renamed or removed tests otherwise leave the troubleshooting guide pointing at nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_FILES = [*REPO.joinpath("tests").rglob("test_*.py"), *REPO.joinpath("extensions").rglob("test_*.py")]
DOCUMENTS = sorted([*REPO.joinpath("docs").glob("*.md"), REPO / "README.md", *REPO.joinpath("roles").glob("*/README.md")])
CITED = re.compile(r"`(test_[A-Za-z0-9_]+)")


def known_tests() -> tuple[set[str], set[str]]:
    functions = {name for path in TEST_FILES for name in re.findall(r"^def (test_\w+)", path.read_text(encoding="utf-8"), re.MULTILINE)}
    return functions, {path.stem for path in TEST_FILES}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_cited_test_exists(document):
    functions, files = known_tests()
    cited = CITED.findall(document.read_text(encoding="utf-8"))
    missing = [name for name in cited if name not in files and not any(function.startswith(name.rstrip("_")) for function in functions)]
    assert not missing, f"{document.relative_to(REPO)} cites tests that do not exist: {missing}"


def test_the_guide_cites_tests():
    assert len(CITED.findall((REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8"))) > 20
