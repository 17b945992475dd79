"""Copy molecule's output from stdin to stdout, stamping where each action starts and ends, then
print one line with the seconds each action took, in order:

    phases: destroy 4s, create 21s, prepare 35s, converge 160s, ..., verify 410s, destroy 9s

Molecule prints no times of its own; this tells where a scenario's minutes go.
Usage: molecule test -s SCENARIO 2>&1 | python3 tools/molecule-phases.py >LOG
"""

import re
import sys
import time

# "INFO     [e2e > converge] Executing" ... "INFO     [e2e > converge] Executed: Successful"
ACTION = re.compile(rb"\[[^]\s]+ > (\w+)\] (Executing|Executed)")

start = time.monotonic()
phases: list[tuple[str, float]] = []
running: tuple[str, float] | None = None
for line in sys.stdin.buffer:
    now = time.monotonic()
    match = ACTION.search(line)
    if match:
        action, event = match.group(1).decode(), match.group(2)
        if event == b"Executing" and (running is None or running[0] != action):
            running = (action, now)
        elif event == b"Executed" and running is not None:
            phases.append((running[0], now - running[1]))
            running = None
        sys.stdout.buffer.write(b"[+%ds] " % (now - start))
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
summary = ", ".join(f"{action} {seconds:.0f}s" for action, seconds in phases)
if running is not None:  # molecule stopped inside an action (it failed)
    summary += f"{', ' if phases else ''}{running[0]} {time.monotonic() - running[1]:.0f}s unfinished"
print(f"phases: {summary}", flush=True)
