"""`notes install nightly` and `notes uninstall nightly`: the promotion report of one store,
run every night by the user's scheduler, in and out again.

The scheduler is a systemd user timer where systemd runs the user's session (its private
socket ``$XDG_RUNTIME_DIR/systemd/private`` is there, or ``systemctl --user
is-system-running`` answers), else a line of the user's crontab (``crontab -l`` / ``crontab
-``). What is scheduled is one command, every path in it absolute: the ``notes`` executable
that ran install, ``--notes`` the resolved store (``--state-dir`` when its state folder is not
the store's own), ``promote --nightly --report-dir DIR``. It needs no shell redirection and no
folder made beforehand: the run makes its report folder and keeps its own log and record
(:mod:`memory.services.nightly_run`), so it works on a machine where nothing else was set up.

Each store has its own entry, named after a digest of its path (``notes-nightly-<8 hex>``):
a timer and service in ``$XDG_CONFIG_HOME/systemd/user/``, or in the crontab a marker comment
naming the store followed by the job's line. Install replaces the store's entry (twice leaves
one, and a move from cron to systemd or back leaves it in one place only); uninstall removes
exactly it, nothing else of the crontab or the timers. ``NOTES_CRONTAB`` and
``NOTES_SYSTEMCTL`` name other ``crontab`` and ``systemctl`` commands (the tests' stand-ins).
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory.errors import ConfigError, InvalidArgument
from memory.state.safe_files import write_atomic

MARK = "# notes-memory nightly for "
MARK_END = ": `notes uninstall nightly` removes this line and the next"
DEFAULT_AT = "03:15"
SCHEDULERS = ("auto", "systemd", "cron")
SESSION_STATES = ("running", "degraded", "starting", "initializing", "maintenance")
TOOL_TIMEOUT_S = 20


@dataclass(frozen=True)
class Tools:
    """The commands and folders of the user's schedulers."""

    crontab: str | None  # the crontab command (None: not installed)
    systemctl: str | None
    unit_dir: Path  # systemd user units: $XDG_CONFIG_HOME/systemd/user
    runtime_dir: Path | None  # $XDG_RUNTIME_DIR

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Tools:
        home = Path(env.get("HOME") or Path.home())
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        runtime = env.get("XDG_RUNTIME_DIR")
        path = env.get("PATH")
        return cls(env.get("NOTES_CRONTAB") or shutil.which("crontab", path=path),
                   env.get("NOTES_SYSTEMCTL") or shutil.which("systemctl", path=path),
                   config / "systemd" / "user", Path(runtime) if runtime else None)


@dataclass(frozen=True)
class Job:
    """What runs every night, for one store."""

    store: Path
    report_dir: Path
    command: list[str]  # the notes executable, absolute (or python -m memory)
    state_dir: Path | None = None  # named when it is not the store's own .notes
    at: str = DEFAULT_AT  # HH:MM, local time

    @property
    def name(self) -> str:
        return unit_name(self.store)

    def argv(self) -> list[str]:
        state = ["--state-dir", str(self.state_dir)] if self.state_dir else []
        return [*self.command, "--notes", str(self.store), *state, "promote", "--nightly",
                "--report-dir", str(self.report_dir)]


@dataclass(frozen=True)
class Change:
    """One place a nightly entry is written to or removed from."""

    where: str  # a file, or "crontab"
    before: str
    after: str
    done: list[str] = field(default_factory=list)  # systemctl calls made

    @property
    def changed(self) -> bool:
        return self.before != self.after


def unit_name(store: Path) -> str:
    return "notes-nightly-" + hashlib.sha256(str(store).encode()).hexdigest()[:8]


def parse_at(value: str) -> str:
    """``HH:MM`` (24 h) or raise InvalidArgument."""
    match = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", value.strip())
    if match is None:
        raise InvalidArgument(f"--at {value!r} is not a time of day; give HH:MM, e.g. 03:15")
    return f"{int(match.group(1)):02d}:{match.group(2)}"


def check_paths(job: Job) -> None:
    for arg in job.argv():
        if "\n" in arg or "\r" in arg:
            raise InvalidArgument(f"{arg!r} holds a line break; a scheduler cannot run it")


# -- which scheduler ----------------------------------------------------------------------
def systemd_usable(tools: Tools) -> bool:
    """Whether systemd runs this user's session, so a user timer would run."""
    if tools.systemctl is None:
        return False
    if tools.runtime_dir is not None and (tools.runtime_dir / "systemd" / "private").exists():
        return True
    try:
        answer = subprocess.run([tools.systemctl, "--user", "is-system-running"],
                                capture_output=True, text=True, timeout=TOOL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return answer.stdout.strip() in SESSION_STATES


def choose_scheduler(tools: Tools, wanted: str = "auto") -> str:
    """``systemd`` or ``cron``: the one asked for, or systemd where it runs the session."""
    if wanted == "systemd" and not systemd_usable(tools):
        raise ConfigError("systemd does not run your user session here (`systemctl --user "
                          "is-system-running` does not answer); use --scheduler cron, or "
                          "log in to a systemd session")
    if wanted == "systemd" or (wanted == "auto" and systemd_usable(tools)):
        return "systemd"
    if tools.crontab is None:
        raise ConfigError("no scheduler here: systemd does not run your user session and "
                          "there is no crontab command; install cron (apt-get install cron, "
                          "dnf install cronie), then run `notes install nightly` again")
    return "cron"


# -- crontab ------------------------------------------------------------------------------
def read_crontab(tools: Tools) -> str:
    """The user's crontab ("" when there is none)."""
    if tools.crontab is None:
        return ""
    result = _run([tools.crontab, "-l"])
    if result.returncode != 0:
        if "no crontab" in (result.stderr + result.stdout).lower():
            return ""
        raise ConfigError(f"`crontab -l` failed: {(result.stderr or result.stdout).strip()}")
    return result.stdout


def write_crontab(tools: Tools, text: str) -> None:
    assert tools.crontab is not None
    result = _run([tools.crontab, "-"], text) if text.strip() else _run([tools.crontab, "-r"])
    if result.returncode != 0 and text.strip():
        raise ConfigError(f"`crontab -` refused the new table: "
                          f"{(result.stderr or result.stdout).strip()}")


def cron_block(job: Job) -> str:
    hour, minute = job.at.split(":")
    line = " ".join(shlex.quote(a) for a in job.argv()).replace("%", "\\%")
    return f"{MARK}{job.store}{MARK_END}\n{int(minute)} {int(hour)} * * * {line}\n"


def without_cron_block(text: str, store: Path, instead: str = "") -> str:
    """``text`` without the marker line of ``store``'s entry and the job line after it
    (``instead`` in the place of the first one)."""
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    skip = False
    for line in lines:
        if skip:
            skip = False
            if "promote --nightly" in line:
                continue
        if line.rstrip("\n") == f"{MARK}{store}{MARK_END}":
            skip = True
            kept.append(instead)
            instead = ""
            continue
        kept.append(line)
    return "".join(kept)


def with_cron_block(text: str, job: Job) -> str:
    """``text`` with ``job``'s entry: in the place of the store's entry, else at the end."""
    block = cron_block(job)
    replaced = without_cron_block(text, job.store, block)
    if block in replaced:
        return replaced
    return replaced + ("\n" if replaced and not replaced.endswith("\n") else "") + block


def cron_entry(text: str, store: Path) -> str | None:
    """The job line of ``store``'s entry in a crontab, if there is one."""
    lines = text.splitlines()
    for index, line in enumerate(lines[:-1]):
        if line == f"{MARK}{store}{MARK_END}" and "promote --nightly" in lines[index + 1]:
            return lines[index + 1]
    return None


def cron_command(line: str) -> str:
    """The shell command of a crontab job line (its five time fields off, ``\\%`` back to
    ``%``): what cron hands to ``/bin/sh -c``."""
    return line.split(None, 5)[5].replace("\\%", "%")


# -- systemd ------------------------------------------------------------------------------
def _systemd_quote(arg: str) -> str:
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("%", "%%").replace("$", "$$") + '"'


def unit_files(job: Job, tools: Tools) -> dict[Path, str]:
    """The service and the timer of ``job``."""
    head = f"{MARK}{job.store}: `notes uninstall nightly` removes this file\n"
    service = (f"{head}[Unit]\nDescription=notes promotion report of {job.store}\n\n"
               f"[Service]\nType=oneshot\n"
               f"ExecStart={' '.join(_systemd_quote(a) for a in job.argv())}\n")
    timer = (f"{head}[Unit]\nDescription=Nightly notes promotion report of {job.store}\n\n"
             f"[Timer]\nOnCalendar=*-*-* {job.at}:00\nPersistent=true\n\n"
             f"[Install]\nWantedBy=timers.target\n")
    return {tools.unit_dir / f"{job.name}.service": service,
            tools.unit_dir / f"{job.name}.timer": timer}


def exec_start(service: str) -> list[str]:
    """The command line of a service's ExecStart, as systemd reads the quoting above."""
    line = next(s for s in service.splitlines() if s.startswith("ExecStart="))
    return [a.replace("%%", "%").replace("$$", "$")
            for a in shlex.split(line.removeprefix("ExecStart="))]


def _systemctl(tools: Tools, *args: str) -> str:
    assert tools.systemctl is not None
    result = _run([tools.systemctl, "--user", *args])
    if result.returncode != 0:
        raise ConfigError(f"`systemctl --user {' '.join(args)}` failed: "
                          f"{(result.stderr or result.stdout).strip()}")
    return "systemctl --user " + " ".join(args)


def _ours(path: Path, store: Path) -> bool:
    try:
        return path.read_text(encoding="utf-8").startswith(f"{MARK}{store}:")
    except OSError:
        return False


# -- install and uninstall ----------------------------------------------------------------
def install(job: Job, tools: Tools, scheduler: str, dry_run: bool = False) -> list[Change]:
    """Write ``job``'s entry with ``scheduler`` (and take the store's entry out of the other
    one); unless ``dry_run``, the changes are made."""
    check_paths(job)
    changes = []
    if scheduler == "cron":
        before = read_crontab(tools)
        changes.append(Change("crontab", before, with_cron_block(before, job)))
        if not dry_run and changes[0].changed:
            write_crontab(tools, changes[0].after)
        return changes + _remove_units(job.store, tools, dry_run)
    files = unit_files(job, tools)
    for path, text in files.items():
        before = path.read_text(encoding="utf-8") if path.exists() else ""
        changes.append(Change(str(path), before, text))
    if not dry_run:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, text)
        timer = f"{job.name}.timer"
        changes[-1].done.extend([_systemctl(tools, "daemon-reload"),
                                 _systemctl(tools, "enable", "--now", timer)])
    return changes + _remove_cron(job.store, tools, dry_run)


def uninstall(store: Path, tools: Tools, dry_run: bool = False) -> list[Change]:
    """Remove ``store``'s entry wherever it is: its crontab lines, its timer and service."""
    return _remove_cron(store, tools, dry_run) + _remove_units(store, tools, dry_run)


def _remove_cron(store: Path, tools: Tools, dry_run: bool) -> list[Change]:
    if tools.crontab is None:
        return []
    before = read_crontab(tools)
    after = without_cron_block(before, store)
    if after == before:
        return []
    if not dry_run:
        write_crontab(tools, after)
    return [Change("crontab", before, after)]


def _remove_units(store: Path, tools: Tools, dry_run: bool) -> list[Change]:
    name = unit_name(store)
    paths = [tools.unit_dir / f"{name}.timer", tools.unit_dir / f"{name}.service"]
    found = [p for p in paths if _ours(p, store)]
    if not found:
        return []
    changes = [Change(str(p), p.read_text(encoding="utf-8"), "") for p in found]
    if dry_run:
        return changes
    if tools.systemctl is not None and systemd_usable(tools):
        changes[0].done.append(_systemctl(tools, "disable", "--now", f"{name}.timer"))
    for path in found:
        path.unlink()
    if tools.systemctl is not None and systemd_usable(tools):
        changes[-1].done.append(_systemctl(tools, "daemon-reload"))
    for folder in (tools.unit_dir, tools.unit_dir.parent):  # made by install, if now empty
        try:
            folder.rmdir()
        except OSError:
            break
    return changes


def installed(store: Path, tools: Tools) -> dict[str, str] | None:
    """Where ``store``'s nightly entry is ({"scheduler", "where", "command"}), or None."""
    timer = tools.unit_dir / f"{unit_name(store)}.timer"
    service = timer.with_suffix(".service")
    if _ours(timer, store) and _ours(service, store):
        command = shlex.join(exec_start(service.read_text(encoding="utf-8")))
        return {"scheduler": "systemd", "where": str(timer), "command": command}
    try:
        line = cron_entry(read_crontab(tools), store)
    except (ConfigError, OSError):
        line = None
    if line is not None:
        return {"scheduler": "cron", "where": "crontab", "command": cron_command(line)}
    return None


def _run(argv: list[str], stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=TOOL_TIMEOUT_S, env={**os.environ, "LC_ALL": "C"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"`{shlex.join(argv)}` could not run ({exc})") from None
