"""Repository contract: what every role, module and filter of the collection must carry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
ROLES = sorted(path.name for path in (REPO / "roles").iterdir() if path.is_dir())
MODULES = sorted((REPO / "plugins" / "modules").glob("*.py"))
FILTERS = sorted(path for path in (REPO / "plugins" / "filter").glob("*.py") if path.name != "__init__.py")
EXPECTED_ROLES = ["gb10_host", "nccl_network", "node_firewall", "ray_cluster", "vllm_image", "vllm_serve"]


def load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def role_entry_points(role: str) -> dict:
    return load_yaml(REPO / "roles" / role / "meta" / "argument_specs.yml")["argument_specs"]


def role_options(role: str) -> dict:
    return role_entry_points(role)["main"].get("options") or {}


def test_the_roles_exist():
    assert ROLES == EXPECTED_ROLES


@pytest.mark.parametrize("role", ROLES)
def test_every_entry_point_has_its_tasks_and_takes_mains_options_as_main_describes_them(role):
    entry_points = role_entry_points(role)
    main = entry_points["main"].get("options") or {}
    for entry, spec in entry_points.items():
        assert (REPO / "roles" / role / "tasks" / f"{entry}.yml").is_file(), f"{role}: entry point {entry} has no tasks/{entry}.yml"
        for name, option in (spec.get("options") or {}).items():
            assert name in main, f"{role}: {entry} takes {name}, which main does not"
            # One description, type and default in one place: the entry point names main's (a YAML alias, *name).
            assert option is main[name] or entry == "main", f"{role}: {entry} describes {name} again; give main's: {name}: *{name}"


@pytest.mark.parametrize("role", ROLES)
def test_role_defaults_match_argument_specs(role):
    defaults = load_yaml(REPO / "roles" / role / "defaults" / "main.yml") or {}
    options = role_options(role)
    assert set(defaults) == {name for name, spec in options.items() if "default" in spec}
    assert not [name for name, spec in options.items() if spec.get("required") and "default" in spec]
    for name, value in defaults.items():
        assert options[name].get("default") == value, f"{role}: default of {name} differs from argument_specs"


@pytest.mark.parametrize("role", ROLES)
def test_role_defaults_pass_validation_before_they_are_templated(role):
    # validate_inventory.yml checks the inventory against the specifications before any role runs, where a default
    # is its text, not yet templated: text passes as a str, path or list, but not as a bool, number or dict, nor
    # against choices, however it would render.
    templated = {name: spec for name, spec in role_options(role).items() if "{{" in str(spec.get("default", ""))}
    refused = {name: spec.get("type") for name, spec in templated.items() if spec.get("type") in ("bool", "int", "float", "dict") or spec.get("choices")}
    assert refused == {}
    # A null default is checked against choices too, at the role's start: a variable with choices names its automatic value.
    assert [name for name, spec in role_options(role).items() if "default" in spec and spec["default"] is None and spec.get("choices")] == []


@pytest.mark.parametrize("role", ROLES)
def test_role_variables_carry_the_role_prefix(role):
    for name in role_options(role):
        assert name.startswith(f"{role}_"), f"{role}: option {name} lacks the {role}_ prefix"


@pytest.mark.parametrize("role", ROLES)
def test_role_has_no_meta_dependencies(role):
    meta = load_yaml(REPO / "roles" / role / "meta" / "main.yml")
    assert meta["dependencies"] == []
    assert meta["galaxy_info"]["role_name"] == role


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.stem)
def test_module_documents_itself(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    assigned = {target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)}
    assert {"DOCUMENTATION", "EXAMPLES", "RETURN"} <= assigned
    docs = {
        target.id: yaml.safe_load(node.value.value)
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in {"DOCUMENTATION", "RETURN"}
    }
    assert docs["DOCUMENTATION"]["module"] == module.stem
    assert docs["RETURN"], f"{module.stem}: RETURN is empty"


@pytest.mark.parametrize("filter_file", FILTERS, ids=lambda path: path.stem)
def test_filter_has_sidecar_docs(filter_file):
    tree = ast.parse(filter_file.read_text(encoding="utf-8"))
    # The names FilterModule.filters() returns.
    filters = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == "filters"]
    names = [
        key.value
        for function in filters
        for node in ast.walk(function)
        if isinstance(node, ast.Dict)
        for key in node.keys
        if isinstance(key, ast.Constant) and isinstance(key.value, str)
    ]
    assert names, f"{filter_file.name}: FilterModule.filters() returns no filter"
    for name in names:
        assert (filter_file.parent / f"{name}.yml").is_file(), f"filter {name} has no sidecar {name}.yml"


def test_no_sanity_ignore_files():
    assert not list((REPO / "tests").glob("sanity/ignore-*.txt"))


def test_lint_config_skips_nothing():
    config = load_yaml(REPO / ".ansible-lint")
    assert config["profile"] == "production"
    assert config.get("skip_list", []) == []
    assert config.get("warn_list", []) == []


# M(sparkinfer.cluster.NAME) and P(sparkinfer.cluster.NAME#TYPE) in the docs Ansible renders (modules, filters, role
# argument specifications): a reference to a plugin that was renamed or removed would render as a dead link.
DOC_REFERENCE = re.compile(r"\b([MP])\(sparkinfer\.cluster\.([a-z0-9_]+)(?:#([a-z]+))?\)")


def documented_plugins() -> set[tuple[str, str]]:
    plugins = {("module", path.stem) for path in MODULES}
    plugins |= {("filter", path.stem) for path in (REPO / "plugins" / "filter").glob("*.yml")}
    plugins |= {("test", path.stem) for path in (REPO / "plugins" / "test").glob("*.yml")}
    return plugins


def test_every_plugin_the_docs_refer_to_exists():
    sources = [*MODULES, *(REPO / "plugins" / "filter").glob("*.yml"), *(REPO / "roles").glob("*/meta/argument_specs.yml")]
    known = documented_plugins()
    dead = [
        f"{path.relative_to(REPO)}: {match.group(0)}"
        for path in sources
        for match in DOC_REFERENCE.finditer(path.read_text(encoding="utf-8"))
        if ("module" if match.group(1) == "M" else match.group(3) or "module", match.group(2)) not in known
    ]
    assert not dead, dead
