"""model_sync in-process: real rsync 3.2.7 outputs of each push (module_utils/fixtures/rsync/SOURCES.md) as rsync's stdout;
then the module against this machine's real rsync and timeout(1) between two temporary directories (fixtures/model_sync/SOURCES.md)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.sparkinfer.cluster.plugins.modules import model_sync

from .module_harness import FakeCommands, ModuleFail, _exit_json, _fail_json, run_module

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


def argv_of(src: Path, dst: Path, *options: str, rsh: Path | str) -> list[str]:
    """The real rsync command of a push of src to dst, as the module runs it (under timeout)."""
    return [RSYNC, "-rt", "--copy-links", "--itemize-changes", *options, "-e", str(rsh), f"{src}/", f"sparkops@192.168.100.11:{dst}/"]


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
    # The command that failed is the last one, the second dry run.
    assert failure.value.result["cmd"] == [TIMEOUT, "--kill-after=10", "3600", *argv_of(src, dst, "--dry-run", "--delete", rsh=tmp_path / "rsh")]


def test_rsync_failing_fails_the_module_with_rsyncs_exit_status_and_message(tmp_path):
    # A source that does not exist: rsync's sender cannot enter it and exits 23 (rsync 3.5.0 here, 3.2.7 on the lab node,
    # the same first line: SOURCES.md).
    _src, dst = a_model(tmp_path)
    missing = tmp_path / "missing"
    with pytest.raises(ModuleFail) as failure:
        push(missing, dst, remote_shell(tmp_path))
    assert failure.value.result["rc"] == 23
    assert failure.value.result["cmd"] == [TIMEOUT, "--kill-after=10", "3600", *argv_of(missing, dst, "--dry-run", "--delete", rsh=tmp_path / "rsh")]
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
    assert failure.value.result["cmd"] == [TIMEOUT, "--kill-after=10", "1", *argv_of(src, dst, "--dry-run", "--delete", rsh=rsh)]
    assert failure.value.result["msg"] == (
        f"`{RSYNC} -rt --copy-links --itemize-changes --dry-run --delete -e {rsh} {src}/ sparkops@192.168.100.11:{dst}/`"
        " did not finish within 1 s and was stopped"
    )


def test_delete_extra_deletes_what_only_the_other_node_holds(tmp_path):
    src, dst = a_model(tmp_path)
    (dst / "notes.txt").write_text("notes\n", encoding="utf-8")
    result = push(src, dst, remote_shell(tmp_path), delete_extra=True)
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (
        True,
        ["config.json", "model.safetensors", "sub/tokenizer.json"],
        [],
        ["notes.txt"],
    )
    assert sorted(path.name for path in dst.iterdir()) == ["config.json", "model.safetensors", "sub"]


def test_a_file_sent_again_and_an_extra_file_back_after_a_deleting_copy_are_both_named(tmp_path):
    # Right after the copy (the module's second rsync run) the receiving node appends a byte to its config.json and writes
    # a notes.txt of its own: the second dry run finds one to send and one to delete.
    src, dst = a_model(tmp_path)
    count = tmp_path / "runs"
    after = (
        f"n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}; [ $n -eq 2 ] && printf x >> {dst}/config.json && echo notes > {dst}/notes.txt"
    )
    with pytest.raises(ModuleFail) as failure:
        push(src, dst, remote_shell(tmp_path, after=after), delete_extra=True)
    assert failure.value.result["msg"] == f"sparkops@192.168.100.11:{dst}/ still differs from {src}/ after the copy: config.json, notes.txt"
    assert failure.value.result["cmd"] == [TIMEOUT, "--kill-after=10", "3600", *argv_of(src, dst, "--dry-run", "--delete", rsh=tmp_path / "rsh")]


def test_the_extra_files_are_those_the_other_node_holds_after_the_copy(tmp_path):
    # Right after the copy the receiving node writes a notes.txt of its own: not there before, there after.
    src, dst = a_model(tmp_path)
    count = tmp_path / "runs"
    after = f"n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $n > {count}; [ $n -eq 2 ] && echo notes > {dst}/notes.txt"
    result = push(src, dst, remote_shell(tmp_path, after=after))
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (
        True,
        ["config.json", "model.safetensors", "sub/tokenizer.json"],
        ["notes.txt"],
        [],
    )


def test_rsync_and_its_remote_shell_run_in_the_c_locale(tmp_path, monkeypatch):
    # rsync's messages, which the module reads and quotes, are the untranslated ones whatever the node's locale.
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    src, dst = a_model(tmp_path)
    seen = tmp_path / "locale"
    push(src, dst, remote_shell(tmp_path, before=f'echo "$LC_ALL" >> {seen}'))
    assert seen.read_text(encoding="utf-8") == "C\nC\nC\n"


def test_check_mode_without_delete_extra_names_the_extra_files():
    pushes = Pushes((DRY_RUN, "dry-run-with-a-changed-file-and-an-extra-file"))
    result = run_module(model_sync.main, {**ARGS, "_ansible_check_mode": True}, pushes)
    assert (result["changed"], result["sent"], result["extra"], result["deleted"]) == (True, ["config.json"], ["notes.txt"], [])


def test_trailing_slashes_of_src_and_dest_make_the_same_command():
    pushes = Pushes((DRY_RUN, "dry-run-of-an-equal-copy"))
    result = run_module(model_sync.main, {**ARGS, "src": f"{MODEL}/", "dest": f"{MODEL}/"}, pushes)
    assert result["cmd"] == list(DRY_RUN)


def test_src_is_a_path_with_the_home_directory_expanded(monkeypatch):
    monkeypatch.setenv("HOME", "/opt/sparkinfer")
    pushes = Pushes((DRY_RUN, "dry-run-of-an-equal-copy"))
    assert run_module(model_sync.main, {**ARGS, "src": "~/models/tiny-qwen3-moe"}, pushes)["cmd"] == list(DRY_RUN)


@pytest.mark.parametrize("dest", ["~/models/tiny-qwen3-moe", "$HOME/models/tiny-qwen3-moe"])
def test_dest_is_the_other_nodes_path_and_reaches_rsync_as_written(monkeypatch, dest):
    # This node's HOME is not the other node's: expanding ~ or $HOME here would name /opt/sparkinfer over there.
    monkeypatch.setenv("HOME", "/opt/sparkinfer")
    dry_run = (*DRY_RUN[:-1], f"sparkops@192.168.100.11:{dest}/")
    pushes = Pushes((dry_run, "dry-run-of-an-equal-copy"))
    assert run_module(model_sync.main, {**ARGS, "dest": dest}, pushes)["cmd"] == list(dry_run)


def test_a_port_number_in_ssh_argv_is_a_word_of_the_ssh_command():
    # YAML reads `ssh_argv: [ssh, -p, 2222]` with the port as a number.
    dry_run = (*DRY_RUN[:10], "ssh -p 2222", *DRY_RUN[11:])
    assert DRY_RUN[9:11] == ("-e", " ".join(SSH))
    pushes = Pushes((dry_run, "dry-run-of-an-equal-copy"))
    assert run_module(model_sync.main, {**ARGS, "ssh_argv": ["ssh", "-p", 2222]}, pushes)["changed"] is False


@pytest.mark.parametrize("name", ["src", "dest_host", "dest_user", "ssh_argv"])
def test_each_required_option_is_required(name):
    pushes = Pushes()
    with pytest.raises(ModuleFail) as failure:
        run_module(model_sync.main, {key: value for key, value in ARGS.items() if key != name}, pushes)
    assert failure.value.result["msg"] == f"missing required arguments: {name}"
    assert pushes.calls == []


@pytest.mark.parametrize(("present", "missing"), [("rsync", "timeout"), ("timeout", "rsync")])
def test_a_node_without_rsync_or_timeout_fails_naming_it(tmp_path, monkeypatch, present, missing):
    # This machine's real lookup (AnsibleModule.get_bin_path), on a PATH that holds only the other command.
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / present).symlink_to(shutil.which(present) or present)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    patches = (mock.patch.object(basic.AnsibleModule, "exit_json", _exit_json), mock.patch.object(basic.AnsibleModule, "fail_json", _fail_json))
    with patch_module_args(ARGS), patches[0], patches[1], pytest.raises(ModuleFail) as failure:
        model_sync.main()
    assert failure.value.result["msg"].startswith(f'Failed to find required executable "{missing}" in paths: {tmp_path / "bin"}')


def test_only_the_trailing_slashes_are_taken_off_a_path_that_ends_in_another_character():
    # A model directory named as MLX conversions are, ending in an X, given with a trailing slash.
    model = "/opt/sparkinfer/models/Qwen3-4B-MLX"
    dry_run = (*DRY_RUN[:11], f"{model}/", f"sparkops@192.168.100.11:{model}/")
    pushes = Pushes((dry_run, "dry-run-of-an-equal-copy"))
    assert run_module(model_sync.main, {**ARGS, "src": f"{model}/", "dest": f"{model}/"}, pushes)["cmd"] == list(dry_run)


def test_the_result_reports_the_options_left_out_as_false(capsys):
    # AnsibleModule's own exit_json: the result a playbook registers, with the options the module ran with.
    pushes = Pushes((DRY_RUN, "dry-run-of-an-equal-copy"))
    patches = (
        mock.patch.object(basic.AnsibleModule, "get_bin_path", lambda _self, name, *_a, **_k: f"/usr/bin/{name}"),
        mock.patch.object(basic.AnsibleModule, "run_command", lambda _self, args, **kwargs: pushes(args, **kwargs)),
    )
    with patch_module_args(ARGS), patches[0], patches[1], pytest.raises(SystemExit) as done:
        model_sync.main()
    assert done.value.code == 0
    options = json.loads(capsys.readouterr().out)["invocation"]["module_args"]
    assert (options["checksum"], options["delete_extra"], options["timeout"], options["dest"]) == (False, False, 3600, None)
