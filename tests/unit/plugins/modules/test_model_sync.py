"""model_sync in-process: real rsync 3.2.7 outputs of each push (module_utils/fixtures/rsync/SOURCES.md) as rsync's stdout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ansible_collections.sparkinfer.cluster.plugins.modules import model_sync

from .module_harness import FakeCommands, ModuleFail, run_module

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures" / "rsync"
MODEL = "/opt/sparkinfer/models/tiny-qwen3-moe"
SSH = ["ssh", "-i", "/root/.ssh/sparkinfer_transfer_ed25519", "-o", "BatchMode=yes"]
ARGS = {"src": MODEL, "dest_host": "192.168.100.11", "dest_user": "sparkops", "ssh_argv": SSH}


def rsync(*options: str) -> tuple[str, ...]:
    """The rsync command the module runs, under timeout(1)."""
    ends = (f"{MODEL}/", f"sparkops@192.168.100.11:{MODEL}/")
    return ("/usr/bin/timeout", "--kill-after=10", "3600", "/usr/bin/rsync", "-rt", "--copy-links", "--itemize-changes", *options, "-e", " ".join(SSH), *ends)


DRY_RUN = rsync("--dry-run", "--delete")
COPY = rsync()


class Pushes(FakeCommands):
    """rsync answering each run in turn with the captured output of that push."""

    def __init__(self, *runs: tuple[tuple[str, ...], str]) -> None:
        super().__init__({})
        self.runs = list(runs)

    def __call__(self, args: list[str], **_kwargs: Any) -> tuple[int, str, str]:
        self.calls.append(tuple(args))
        expected, name = self.runs.pop(0)
        assert tuple(args) == expected
        return 0, (FIXTURES / f"{name}.txt").read_text(encoding="utf-8"), ""


def test_a_node_without_the_model_gets_every_file_and_a_second_dry_run_finds_nothing_left():
    pushes = Pushes((DRY_RUN, "dry-run-into-an-empty-directory"), (COPY, "copy-into-an-empty-directory"), (DRY_RUN, "dry-run-of-an-equal-copy"))
    result = run_module(model_sync.main, ARGS, pushes)
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (True, ["config.json", "model.safetensors", "sub/tokenizer.json"], [], [])
    assert pushes.runs == []


def test_an_equal_copy_whose_directories_have_another_time_is_left_alone():
    pushes = Pushes((DRY_RUN, "dry-run-of-an-equal-copy-into-a-directory-of-another-time"))
    result = run_module(model_sync.main, ARGS, pushes)
    assert (result["changed"], result["sent"], result["extra"], result["cmd"]) == (False, [], [], list(DRY_RUN))


def test_a_changed_file_is_sent_and_a_file_of_the_other_node_is_named_not_deleted():
    pushes = Pushes(
        (DRY_RUN, "dry-run-with-a-changed-file-and-an-extra-file"),
        (COPY, "copy-of-a-changed-file-beside-an-extra-file"),
        (DRY_RUN, "dry-run-after-a-copy-beside-an-extra-file"),
    )
    result = run_module(model_sync.main, ARGS, pushes)
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (True, ["config.json"], ["notes.txt"], [])


def test_check_mode_says_what_would_be_sent_and_deleted_and_copies_nothing():
    pushes = Pushes((DRY_RUN, "dry-run-with-a-changed-file-and-an-extra-file"))
    result = run_module(model_sync.main, {**ARGS, "delete_extra": True, "_ansible_check_mode": True}, pushes)
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (True, ["config.json"], [], ["notes.txt"])
    assert pushes.runs == []


def test_a_checksum_run_sends_nothing_for_a_file_that_only_has_another_time():
    pushes = Pushes((rsync("--checksum", "--dry-run", "--delete"), "dry-run-checksum-of-a-file-with-another-time"))
    assert run_module(model_sync.main, {**ARGS, "checksum": True}, pushes)["changed"] is False


def test_a_quick_check_sends_a_file_that_has_another_time():
    pushes = Pushes((DRY_RUN, "dry-run-of-a-file-with-another-time"))
    result = run_module(model_sync.main, {**ARGS, "_ansible_check_mode": True}, pushes)
    assert (result["changed"], result["sent"]) == (True, ["model.safetensors"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"timeout": 0}, "timeout is 0: give the seconds an rsync run may take, above 0"),
        ({"ssh_argv": ["ssh", "-o", "ProxyCommand=nc x 22"]}, "give the SSH command as words without spaces"),
    ],
)
def test_bad_input_is_refused_before_rsync_runs(override, message):
    pushes = Pushes()
    with pytest.raises(ModuleFail) as failure:
        run_module(model_sync.main, {**ARGS, **override}, pushes)
    assert message in failure.value.result["msg"]
    assert pushes.calls == []
