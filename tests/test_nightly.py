"""`notes install nightly` and `notes uninstall nightly` in a scratch HOME, with a stand-in
`crontab` that keeps the table in a file (NOTES_CRONTAB) and a stand-in `systemctl` that
records its calls (NOTES_SYSTEMCTL): install, the entry's content, the exact command it
installed run by hand on a fresh HOME, `notes status` showing that run, uninstall leaving the
crontab and the timers as they were."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import NOTES_BIN, copy_initialised
from memory.services.nightly import cron_command, exec_start, unit_name

FAKE_CRONTAB = """#!/bin/sh
table="{table}"
case "$1" in
  -l) if [ -f "$table" ]; then cat "$table"; else echo "no crontab for $(id -un)" >&2; exit 1; fi ;;
  -r) rm -f "$table" ;;
  -) cat > "$table" ;;
  *) echo "usage: crontab [-l|-r|-]" >&2; exit 2 ;;
esac
"""
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "{calls}"
if [ "$2" = is-system-running ]; then echo {state}; [ {state} = running ]; exit $?; fi
exit 0
"""
USER_CRONTAB = "MAILTO=me@example.org\n# my backups\n0 2 * * * /usr/local/bin/backup --all\n"


class Machine:
    """A scratch user: HOME, XDG folders, the stand-ins, stores as `notes init` makes them
    (copies of ``template``, conftest's ``initialised_store``)."""

    def __init__(self, root: Path, systemd: bool, template: Path) -> None:
        self.root, self.home, self.template = root, root / "home", template
        self.home.mkdir(parents=True)
        self.table, self.calls = root / "crontab.txt", root / "systemctl.calls"
        tools = root / "tools"
        tools.mkdir()
        crontab, systemctl = tools / "crontab", tools / "systemctl"
        crontab.write_text(FAKE_CRONTAB.format(table=self.table))
        systemctl.write_text(FAKE_SYSTEMCTL.format(
            calls=self.calls, state="running" if systemd else "offline"))
        crontab.chmod(0o755)
        systemctl.chmod(0o755)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("NOTES_", "XDG_"))}
        self.env |= {"HOME": str(self.home), "XDG_CONFIG_HOME": str(root / "config"),
                     "XDG_DATA_HOME": str(root / "data"), "XDG_STATE_HOME": str(root / "st"),
                     "XDG_CACHE_HOME": str(root / "cache"),
                     "XDG_RUNTIME_DIR": str(root / "run"), "NOTES_CRONTAB": str(crontab),
                     "NOTES_SYSTEMCTL": str(systemctl)}
        self.units = root / "config" / "systemd" / "user"
        self.store = root / "notes"

    def notes(self, *args: str, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(NOTES_BIN), *args], capture_output=True, text=True,
                              env=self.env | (env or {}), cwd=self.root, timeout=120)

    def make_store(self, path: Path | None = None) -> Path:
        """A store as `notes init` leaves it: a copy of the session's (init writes no path
        into a store, nor anything into HOME or the XDG folders)."""
        return copy_initialised(self.template, path or self.store)

    def status(self, store: Path) -> dict[str, object]:
        shown = self.notes("--notes", str(store), "status", "--json")
        data: dict[str, object] = json.loads(shown.stdout)
        return data

    def systemctl_calls(self) -> list[str]:
        """What the stand-in systemctl was asked to do (not the questions whether it runs)."""
        return [c for c in self.calls.read_text().splitlines() if "is-system-running" not in c]

    def tree(self, folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*")
                if p.is_file()} if folder.exists() else {}


@pytest.fixture
def cron_machine(tmp_path: Path, initialised_store: Path) -> Machine:
    machine = Machine(tmp_path, systemd=False, template=initialised_store)
    machine.table.write_text(USER_CRONTAB)
    machine.make_store()
    return machine


def run_by_hand(command: str, machine: Machine, home: Path) -> subprocess.CompletedProcess[str]:
    """The installed command as cron runs it: /bin/sh -c, a bare environment (HOME, a short
    PATH, no XDG folders), from HOME."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SHELL": "/bin/sh", "LANG": "C.UTF-8"}
    return subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True,
                          env=env, cwd=home, timeout=120)


def test_cron_install_run_status_uninstall(cron_machine: Machine, tmp_path: Path) -> None:
    machine = cron_machine
    made = machine.notes("--notes", str(machine.store), "install", "nightly", "--at", "4:05")
    assert made.returncode == 0, made.stderr
    assert "updated: crontab" in made.stdout and "(cron)" in made.stdout
    table = machine.table.read_text()
    assert table.startswith(USER_CRONTAB)  # the user's lines first, untouched
    ours = table[len(USER_CRONTAB):].splitlines()
    assert len(ours) == 2 and ours[0].startswith(f"# notes-memory nightly for {machine.store}")
    assert ours[1].startswith("5 4 * * * ")
    command = cron_command(ours[1])
    argv = shlex.split(command)
    assert argv[0] == str(NOTES_BIN) and Path(argv[0]).is_absolute()
    reports = machine.store / ".notes" / "reports"
    assert argv[1:] == ["--notes", str(machine.store), "promote", "--nightly", "--report-dir",
                        str(reports)]
    assert ">" not in command and "2>" not in command  # no folder needed before it starts
    assert machine.status(machine.store)["nightly"] == {
        "installed": True, "scheduler": "cron", "where": "crontab", "command": command,
        "last_run": None, "log": str(machine.store / ".notes" / "nightly.log")}

    # the exact command, by hand, on a fresh HOME with no report folder
    (reports).rmdir()
    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    ran = run_by_hand(command, machine, fresh)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == ""
    written = sorted(p.name for p in reports.iterdir())
    assert len(written) == 2 and written[0].startswith("promotion-")
    assert (reports / written[1]).read_text().startswith("# Promotion report, ")
    nightly = machine.status(machine.store)["nightly"]
    assert isinstance(nightly, dict)
    last = nightly["last_run"]
    assert last["ok"] is True and last["report"] == str(reports / written[1])
    log = (machine.store / ".notes" / "nightly.log").read_text().splitlines()
    assert len(log) == 1 and log[0].endswith(f"ok: {reports / written[1]}")
    text = machine.notes("--notes", str(machine.store), "status").stdout
    assert f"nightly report: installed (cron); last run {last['ran']}, report " in text

    gone = machine.notes("--notes", str(machine.store), "uninstall", "nightly")
    assert gone.returncode == 0, gone.stderr
    assert machine.table.read_text() == USER_CRONTAB  # byte-identical
    assert machine.status(machine.store)["nightly"]["installed"] is False  # type: ignore[index]


def test_installing_twice_leaves_one_and_each_store_its_own(cron_machine: Machine) -> None:
    machine = cron_machine
    other = machine.make_store(machine.root / "other-store")
    for store in (machine.store, machine.store, other, machine.store):
        made = machine.notes("--notes", str(store), "install", "nightly")
        assert made.returncode == 0, made.stderr
    table = machine.table.read_text()
    assert table.count("promote --nightly") == 2 and table.count("# notes-memory") == 2
    assert "unchanged: crontab" in machine.notes("--notes", str(other), "install",
                                                 "nightly").stdout
    assert machine.notes("--notes", str(machine.store), "uninstall", "nightly").returncode == 0
    rest = machine.table.read_text()
    assert rest.startswith(USER_CRONTAB) and rest.count("promote --nightly") == 1
    assert f"--notes {other}" in rest
    again = machine.notes("--notes", str(machine.store), "uninstall", "nightly")
    assert again.returncode == 0 and "nothing to do" in again.stdout


def test_no_crontab_before_and_none_after(tmp_path: Path, initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=False, template=initialised_store)
    machine.make_store()
    assert machine.notes("--notes", str(machine.store), "install", "nightly").returncode == 0
    assert machine.table.read_text().count("promote --nightly") == 1
    assert machine.notes("--notes", str(machine.store), "uninstall", "nightly").returncode == 0
    assert not machine.table.exists()  # `crontab -r`: as it was, no table at all


def test_systemd_install_run_status_uninstall(tmp_path: Path, initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=True, template=initialised_store)
    machine.make_store()
    machine.units.mkdir(parents=True)
    (machine.units / "mine.timer").write_text("[Timer]\nOnCalendar=daily\n")
    before = machine.tree(machine.root / "config")
    made = machine.notes("--notes", str(machine.store), "install", "nightly")
    assert made.returncode == 0, made.stderr
    name = unit_name(machine.store)
    service = (machine.units / f"{name}.service").read_text()
    timer = (machine.units / f"{name}.timer").read_text()
    assert "OnCalendar=*-*-* 03:15:00" in timer and "Persistent=true" in timer
    assert "WantedBy=timers.target" in timer and "Type=oneshot" in service
    assert machine.systemctl_calls() == ["--user daemon-reload",
                                         f"--user enable --now {name}.timer"]
    assert not machine.table.exists()  # not in the crontab too
    argv = exec_start(service)
    assert argv[:3] == [str(NOTES_BIN), "--notes", str(machine.store)]
    assert machine.status(machine.store)["nightly"]["where"] == str(  # type: ignore[index]
        machine.units / f"{name}.timer")

    fresh = tmp_path / "fresh-home"
    fresh.mkdir()
    ran = run_by_hand(shlex.join(argv), machine, fresh)  # systemd runs no shell: the same argv
    assert ran.returncode == 0, ran.stderr
    last = machine.status(machine.store)["nightly"]["last_run"]  # type: ignore[index]
    assert last["ok"] is True and Path(last["report"]).is_file()

    gone = machine.notes("--notes", str(machine.store), "uninstall", "nightly")
    assert gone.returncode == 0, gone.stderr
    assert machine.tree(machine.root / "config") == before  # byte-identical
    assert machine.systemctl_calls()[-2:] == [f"--user disable --now {name}.timer",
                                              "--user daemon-reload"]


def test_systemd_from_nothing_leaves_nothing(tmp_path: Path, initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=True, template=initialised_store)
    machine.make_store()
    assert machine.notes("--notes", str(machine.store), "install", "nightly").returncode == 0
    assert machine.notes("--notes", str(machine.store), "uninstall", "nightly").returncode == 0
    assert not (machine.root / "config" / "systemd").exists()


def test_moving_to_cron_takes_the_timer_away(tmp_path: Path, initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=True, template=initialised_store)
    machine.make_store()
    assert machine.notes("--notes", str(machine.store), "install", "nightly").returncode == 0
    moved = machine.notes("--notes", str(machine.store), "install", "nightly", "--scheduler",
                          "cron")
    assert moved.returncode == 0, moved.stderr
    assert machine.table.read_text().count("promote --nightly") == 1
    assert not list(machine.units.glob("notes-nightly-*"))
    assert machine.systemctl_calls()[-2:] == [
        f"--user disable --now {unit_name(machine.store)}.timer", "--user daemon-reload"]
    back = machine.notes("--notes", str(machine.store), "install", "nightly")
    assert back.returncode == 0 and not machine.table.exists()  # and back: cron emptied


def test_without_any_scheduler_the_error_names_what_to_install(tmp_path: Path,
                                                               initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=False, template=initialised_store)
    machine.make_store()
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    env = {"NOTES_CRONTAB": "", "NOTES_SYSTEMCTL": "", "PATH": str(empty)}
    result = machine.notes("--notes", str(machine.store), "install", "nightly", env=env)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith("Error: no scheduler here")
    assert "install cron" in result.stderr and "Traceback" not in result.stderr


def test_a_failed_run_is_recorded_and_shown(cron_machine: Machine, tmp_path: Path) -> None:
    machine = cron_machine
    assert machine.notes("--notes", str(machine.store), "install", "nightly", "--report-dir",
                         str(tmp_path / "shared" / "reports")).returncode == 0
    command = cron_command(machine.table.read_text().splitlines()[-1])
    (tmp_path / "shared" / "reports").rmdir()
    (tmp_path / "shared").rmdir()
    (tmp_path / "shared").write_text("a file where the report folder's parent should be")
    ran = run_by_hand(command, machine, machine.home)
    assert ran.returncode == 1 and ran.stderr.startswith("Error: cannot ")
    assert "report" in ran.stderr and "Traceback" not in ran.stderr
    data = machine.status(machine.store)
    assert data["nightly"]["last_run"]["ok"] is False  # type: ignore[index]
    assert any("the last nightly report failed" in p["message"]  # type: ignore[index]
               for p in data["problems"])  # type: ignore[union-attr]


def test_dry_run_changes_nothing(cron_machine: Machine) -> None:
    machine = cron_machine
    shown = machine.notes("--notes", str(machine.store), "install", "nightly", "--dry-run")
    assert shown.returncode == 0, shown.stderr
    assert "+# notes-memory nightly for" in shown.stdout and "would run" in shown.stdout
    assert machine.table.read_text() == USER_CRONTAB


def test_a_bad_time_is_refused_before_anything_is_made(tmp_path: Path,
                                                        initialised_store: Path) -> None:
    machine = Machine(tmp_path, systemd=False, template=initialised_store)
    result = machine.notes("install", "nightly", "--at", "25:00")
    assert result.returncode == 1 and "give HH:MM" in result.stderr
    assert not (tmp_path / "data").exists() and not machine.table.exists()
