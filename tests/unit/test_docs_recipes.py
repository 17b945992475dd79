"""docs/recipes.md is what tools/render_recipes.py makes of the recipes as they are now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_recipes_page_is_current():
    spec = importlib.util.spec_from_file_location("render_recipes", REPO / "tools" / "render_recipes.py")
    assert spec is not None and spec.loader is not None
    render_recipes = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render_recipes)
    current = (REPO / "docs" / "recipes.md").read_text(encoding="utf-8")
    assert current == render_recipes.render(render_recipes.load_all()), "docs/recipes.md is stale: run python3 tools/render_recipes.py"
