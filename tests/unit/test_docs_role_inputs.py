"""Each role's README table of inputs is what tools/render_role_inputs.py makes of its argument specification as it is now."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("render_role_inputs", REPO / "tools" / "render_role_inputs.py")
assert _SPEC is not None and _SPEC.loader is not None
render_role_inputs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(render_role_inputs)


@pytest.mark.parametrize("role", render_role_inputs.roles(), ids=lambda role: role.name)
def test_the_readmes_inputs_are_the_argument_specification(role):
    current = (role / "README.md").read_text(encoding="utf-8")
    assert current == render_role_inputs.rendered(role), f"{role.name}/README.md's inputs are stale: run python3 tools/render_role_inputs.py"


def test_every_option_of_main_has_a_row_and_a_template_default_is_said_in_words():
    for role in render_role_inputs.roles():
        rendered = render_role_inputs.rendered(role)
        spec = render_role_inputs.yaml.safe_load((role / "meta" / "argument_specs.yml").read_text(encoding="utf-8"))
        for name in spec["argument_specs"]["main"]["options"]:
            [row] = [line for line in rendered.splitlines() if line.startswith(f"| `{name}` |")]
            # A default that is a template is said by the description's "By default" sentence, not shown as Jinja.
            assert "{{" not in row.split(" | ")[1], f"{role.name}: give {name} a sentence 'By default ...' in its description"


def test_markup_becomes_markdown_and_the_first_sentence_ends_outside_code():
    assert render_role_inputs.markdown("Set O(a_b) to C(x|y), I(not) V(z).") == "Set `a_b` to `x\\|y`, *not* `z`."
    assert render_role_inputs.first_sentence("Runs C(ray start). Then waits.") == "Runs C(ray start)."
    assert render_role_inputs.default_of({"default": "{{ x }}", "description": ["Y.", "By default C(x), else none."]}) == "`x`, else none"
    assert render_role_inputs.default_of({"default": "{{ x | first }}", "description": "Y."}) == "`{{ x \\| first }}`"


def test_a_readme_without_the_markers_is_refused():
    with pytest.raises(ValueError, match=r"no .*BEGIN inputs"):
        render_role_inputs.render("# role\n", {"argument_specs": {"main": {"options": {}}}})
