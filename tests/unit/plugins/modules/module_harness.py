"""Run a module's main() in-process: module args in, exit_json/fail_json results out."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from unittest import mock

from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class ModuleExit(Exception):
    """exit_json was called; .result holds what the module returned."""

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__(result)
        self.result = result


class ModuleFail(ModuleExit):
    """fail_json was called."""


def _exit_json(_module: basic.AnsibleModule, **result: Any) -> None:
    result.setdefault("changed", False)
    raise ModuleExit(result)


def _fail_json(_module: basic.AnsibleModule, **result: Any) -> None:
    result["failed"] = True
    raise ModuleFail(result)


class FakeCommands:
    """Answers run_command by argv; records every call. Unknown commands fail the test."""

    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, args: list[str], **_kwargs: Any) -> tuple[int, str, str]:
        argv = tuple(args)
        self.calls.append(argv)
        if argv not in self.answers:
            raise AssertionError(f"unexpected command {argv}")
        return self.answers[argv]


class RecordingCommands(FakeCommands):
    """FakeCommands that also keeps the keyword arguments of each call (the environment)."""

    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
        super().__init__(answers)
        self.kwargs: list[dict[str, Any]] = []

    def __call__(self, args: list[str], **kwargs: Any) -> tuple[int, str, str]:
        self.kwargs.append(kwargs)
        return super().__call__(args, **kwargs)


def run_module(
    main: Callable[[], None],
    args: dict[str, Any],
    commands: FakeCommands | None = None,
    bin_paths: dict[str, str | None] | None = None,
) -> dict[str, Any]:
    """Run main() with args; return the exit_json result or raise ModuleFail with the fail_json result."""
    paths = bin_paths or {}
    patches: list[Any] = [
        mock.patch.object(basic.AnsibleModule, "exit_json", _exit_json),
        mock.patch.object(basic.AnsibleModule, "fail_json", _fail_json),
        mock.patch.object(basic.AnsibleModule, "get_bin_path", lambda _self, name, *_a, **_k: paths.get(name, f"/usr/bin/{name}")),
    ]
    if commands is not None:
        patches.append(mock.patch.object(basic.AnsibleModule, "run_command", lambda _self, args, **kwargs: commands(args, **kwargs)))
    with patch_module_args(args):
        for patch in patches:
            patch.start()
        try:
            main()
        except ModuleFail:
            raise
        except ModuleExit as done:
            return done.result
        finally:
            for patch in patches:
                patch.stop()
    raise AssertionError("the module returned without exit_json or fail_json")
