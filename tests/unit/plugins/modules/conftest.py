from __future__ import annotations

import pytest

from ..module_utils.corpus import lab_log, text


@pytest.fixture
def ready_file(tmp_path) -> str:
    """The captured ready start of real vLLM, as a plain log file on disk (the modules read files)."""
    path = tmp_path / "vllm.log"
    path.write_text(text(lab_log("0.32.0-ready-tp1")), encoding="utf-8")
    return str(path)
