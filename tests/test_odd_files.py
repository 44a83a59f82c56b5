"""A named pipe, or a socket, named like a note in the store is no note: every command
leaves it out. Reading a named pipe waits for a writer, so `notes suggest`, `list` and
`check` blocked on one for good, and so would the server's index refresh (issue 33)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

from conftest import RunCli


def test_a_named_pipe_or_socket_in_the_store_is_left_out(run_cli_process: RunCli,
                                                         store_dir: Path) -> None:
    os.mkfifo(store_dir / "pipe.md")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(str(store_dir / "infra" / "sock.md"))
        for args in (["suggest", "redis"], ["list"], ["check"], ["index"]):
            result = run_cli_process(*args)  # a blocked read is killed after 120 s
            assert result.returncode == 0, (args, result.stderr)
            shown = [line for line in result.stdout.splitlines()
                     if line.startswith(("pipe ", "infra/sock ")) or "pipe.md" in line
                     or "sock.md" in line]
            assert shown == [], (args, shown)
        missing = run_cli_process("read", "pipe")
        assert missing.returncode == 1 and "no note 'pipe'" in missing.stderr
