"""A stand-in for the docker CLI that the log-source tests run as a real process (through sh and timeout(1)).

Its state is a directory: `stdout` and `stderr` hold the container's two streams as
`docker logs --timestamps` prints them (raw bytes; --since and --tail are applied as docker does), `rc` the status `docker logs` exits with
(docker's own error message in `error`), `status` what `docker inspect` prints, and `hang`, when
present, makes every command sleep. Each call is appended to `calls` as JSON: its arguments and
how many bytes it printed. `pid` holds the process id of the last call.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from calendar import timegm
from pathlib import Path


def nanoseconds(stamp: str) -> int:
    """Nanoseconds since the epoch of an RFC 3339 UTC timestamp with a fraction, as docker prints them."""
    seconds, _dot, fraction = stamp.rstrip("Z").partition(".")
    return timegm(time.strptime(seconds, "%Y-%m-%dT%H:%M:%S")) * 10**9 + int(fraction.ljust(9, "0")[:9] or 0)


def since_nanoseconds(value: str) -> int:
    """What `docker logs --since` accepts of what the collection sends: Unix seconds with nine decimals."""
    seconds, _dot, fraction = value.partition(".")
    if not seconds.isdigit() or len(fraction) != 9 or not fraction.isdigit():
        raise SystemExit(f'failed to parse value as time or duration: "{value}"')
    return int(seconds) * 10**9 + int(fraction)


def since(data: bytes, floor: int | None) -> bytes:
    """The lines of a stream docker logs --since prints: those stamped at or after the floor."""
    if floor is None:
        return data
    kept = [line for line in data.split(b"\n")[:-1] if nanoseconds(line.split(b" ", 1)[0].decode()) >= floor]
    return b"".join(line + b"\n" for line in kept)


def tail(out: bytes, err: bytes, count: int) -> tuple[bytes, bytes]:
    """The last `count` lines of the log (both streams, in the order of their stamps), as docker logs --tail."""
    tagged = [(nanoseconds(line.split(b" ", 1)[0].decode()), stream, line) for stream, data in ((0, out), (1, err)) for line in data.split(b"\n")[:-1]]
    kept = sorted(tagged, key=lambda entry: entry[0])[-count:] if count > 0 else []
    return tuple(b"".join(line + b"\n" for _stamp, stream, line in kept if stream == wanted) for wanted in (0, 1))  # type: ignore[return-value]


def logs(state: Path, args: list[str]) -> tuple[int, bytes, bytes]:
    floor = since_nanoseconds(args[args.index("--since") + 1]) if "--since" in args else None
    rc = int((state / "rc").read_text()) if (state / "rc").exists() else 0
    if rc != 0:
        return rc, b"", (state / "error").read_bytes()
    out, err = (state / "stdout").read_bytes(), (state / "stderr").read_bytes()
    if "--tail" in args:
        out, err = tail(out, err, int(args[args.index("--tail") + 1]))
    return 0, since(out, floor), since(err, floor)


def main(state: Path, args: list[str]) -> int:
    (state / "pid").write_text(str(os.getpid()))
    if (state / "hang").exists():
        time.sleep(60)
    if args[0] == "logs":
        rc, out, err = logs(state, args)
    elif args[0] == "inspect":
        rc, out, err = 0, (state / "status").read_bytes(), b""
    else:
        rc, out, err = 1, b"", f"unknown command {args[0]}\n".encode()
    with (state / "calls").open("a", encoding="utf-8") as calls:
        calls.write(json.dumps({"args": args, "bytes": len(out) + len(err)}) + "\n")
    sys.stdout.buffer.write(out)
    sys.stderr.buffer.write(err)
    return rc


class FakeDocker:
    """Sets up the stand-in in a directory: `path` is an executable to give as the docker binary."""

    def __init__(self, root: Path) -> None:
        self.state = root / "docker-state"
        self.state.mkdir()
        self.path = root / "docker"
        self.path.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{Path(__file__).resolve()}' '{self.state}' \"$@\"\n", encoding="utf-8")
        self.path.chmod(0o755)
        self.streams(b"")
        self.status("running 0")

    def streams(self, stdout: bytes | str, stderr: bytes | str = b"") -> None:
        for name, data in (("stdout", stdout), ("stderr", stderr)):
            (self.state / name).write_bytes(data.encode() if isinstance(data, str) else data)

    def status(self, text: str) -> None:
        (self.state / "status").write_text(text + "\n", encoding="utf-8")

    def fail(self, rc: int, error: str) -> None:
        (self.state / "rc").write_text(str(rc), encoding="utf-8")
        (self.state / "error").write_text(error, encoding="utf-8")

    def hang(self) -> None:
        (self.state / "hang").touch()

    def calls(self) -> list[dict]:
        path = self.state / "calls"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []

    def pid(self) -> int:
        return int((self.state / "pid").read_text(encoding="utf-8"))


def run_command(argv: list[str]) -> tuple[int, str, str]:
    """What the modules' run_command does with the arguments the log source gives it."""
    done = subprocess.run(argv, capture_output=True, check=False, env={**os.environ, "LC_ALL": "C"})
    return done.returncode, done.stdout.decode("utf-8", errors="replace"), done.stderr.decode("utf-8", errors="replace")


def running(pid: int) -> bool:
    """Whether a process still runs (a zombie waiting to be reaped has stopped)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2:]))


TIMEOUT = shutil.which("timeout") or "/usr/bin/timeout"
SH = shutil.which("sh") or "/bin/sh"


def stamped(log_lines: list[str]) -> str:
    """Lines as `docker logs --timestamps` prints them, a second apart."""
    return "".join(f"2026-12-02T15:{n // 60:02d}:{n % 60:02d}.000000000Z {line.rstrip(chr(10))}\n" for n, line in enumerate(log_lines))


def bin_paths(docker: FakeDocker) -> dict[str, str | None]:
    """What a module run by the test harness finds for the commands a container log source runs."""
    return {"docker": str(docker.path), "timeout": TIMEOUT, "sh": SH}
