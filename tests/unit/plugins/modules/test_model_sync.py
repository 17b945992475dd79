"""model_sync in-process: real rsync 3.2.7 outputs of each push (module_utils/fixtures/rsync/SOURCES.md) as rsync's stdout;
then the module against this machine's real rsync and timeout(1) between two temporary directories (fixtures/model_sync/SOURCES.md)."""

from __future__ import annotations

import os
import shutil
import time
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


# The module's copy logic against the real rsync and timeout(1) of this machine, between two temporary directories. The
# remote shell (the module's ssh_argv) is a pipe to rsync's receiving side run here: rsync runs `RSH -l USER HOST
# rsync --server ...` (seen in a real run, fixtures/model_sync/SOURCES.md), which the script below runs without the
# login and the host, as sshd would run it on the node; the protocol and rsync's outputs are those of a push over SSH.
# tools/host-setup.sh installs rsync: without it these tests fail, never skip.
RSYNC = shutil.which("rsync") or "rsync is not installed: run tools/host-setup.sh (apt-get install rsync)"
TIMEOUT = shutil.which("timeout")
PIPE = '#!/bin/sh\n[ "$1" = -l ] && shift 2\nshift\n'


def remote_shell(tmp_path: Path, before: str = "", after: str = "") -> str:
    """A remote shell that runs rsync's receiving side here, with shell lines run before it and after it."""
    path = tmp_path / "rsh"
    path.write_text(f'{PIPE}{before}\n"$@"\nrc=$?\n{after}\nexit $rc\n', encoding="utf-8")
    path.chmod(0o755)
    return str(path)


def a_model(tmp_path: Path) -> tuple[Path, Path]:
    """The small model directory of module_utils/fixtures/rsync/capture.sh, and an empty directory to push it to."""
    src, dst = tmp_path / "src", tmp_path / "dst"
    (src / "sub").mkdir(parents=True)
    dst.mkdir()
    (src / "config.json").write_text('{"architectures": ["Qwen3MoeForCausalLM"]}\n', encoding="utf-8")
    (src / "model.safetensors").write_bytes(bytes(4096))
    (src / "sub" / "tokenizer.json").write_text("tokenizer\n", encoding="utf-8")
    for name in ("config.json", "model.safetensors", "sub/tokenizer.json"):
        os.utime(src / name, (1767225600, 1767225600))  # 2026-01-01 00:00:00 UTC
    return src, dst


def push(src: Path, dst: Path, rsh: str, **options: Any) -> dict[str, Any]:
    args = {"src": str(src), "dest": str(dst), "dest_host": "192.168.100.11", "dest_user": "sparkops", "ssh_argv": [rsh], **options}
    return run_module(model_sync.main, args, bin_paths={"rsync": RSYNC, "timeout": TIMEOUT})


def test_a_real_push_into_an_empty_directory_copies_every_file_and_finds_nothing_left(tmp_path):
    # The control of the next test: the same push, with nothing changing the copy, succeeds.
    src, dst = a_model(tmp_path)
    result = push(src, dst, remote_shell(tmp_path))
    assert (result["changed"], result["sent"], result["extra"]) == (True, ["config.json", "model.safetensors", "sub/tokenizer.json"], [])
    assert (dst / "sub" / "tokenizer.json").read_text(encoding="utf-8") == "tokenizer\n"
    assert "--dry-run" in result["cmd"]


def test_a_copy_that_still_differs_after_the_push_fails_naming_the_file(tmp_path):
    # The one change to the control: right after the copy (the module's second rsync run) something on the receiving
    # node appends a byte to its config.json, so the second dry run really finds it to send again (`<f.st...... config.json`
    # in the real run of SOURCES.md).
    src, dst = a_model(tmp_path)
    count = tmp_path / "runs"
    after = f"n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}; [ $n -eq 2 ] && printf x >> {dst}/config.json"
    with pytest.raises(ModuleFail) as failure:
        push(src, dst, remote_shell(tmp_path, after=after))
    assert failure.value.result["msg"] == f"sparkops@192.168.100.11:{dst}/ still differs from {src}/ after the copy: config.json"
    assert (failure.value.result["changed"], failure.value.result["sent"]) == (True, ["config.json", "model.safetensors", "sub/tokenizer.json"])
    assert count.read_text(encoding="utf-8") == "3\n"


def test_rsync_failing_fails_the_module_with_rsyncs_exit_status_and_message(tmp_path):
    # A source that does not exist: rsync's sender cannot enter it and exits 23 (rsync 3.5.0 here, 3.2.7 on the lab node,
    # the same first line: SOURCES.md).
    _src, dst = a_model(tmp_path)
    missing = tmp_path / "missing"
    with pytest.raises(ModuleFail) as failure:
        push(missing, dst, remote_shell(tmp_path))
    assert failure.value.result["rc"] == 23
    assert failure.value.result["msg"].startswith(
        f'rsync to sparkops@192.168.100.11:{dst}/ failed with rc=23: rsync: [sender] change_dir "{missing}" failed: No such file or directory (2)\n'
    )
    assert not list(dst.iterdir())


def test_an_rsync_run_past_the_timeout_is_stopped_and_named(tmp_path):
    # A node that accepts the connection and never answers: the remote shell sleeps 20 s before rsync's receiving side.
    src, dst = a_model(tmp_path)
    rsh = remote_shell(tmp_path, before="sleep 20")
    started = time.monotonic()
    with pytest.raises(ModuleFail) as failure:
        push(src, dst, rsh, timeout=1)
    assert time.monotonic() - started < 10
    assert failure.value.result["rc"] == 124
    assert failure.value.result["msg"] == (
        f"`{RSYNC} -rt --copy-links --itemize-changes --dry-run --delete -e {rsh} {src}/ sparkops@192.168.100.11:{dst}/`"
        " did not finish within 1 s and was stopped"
    )
