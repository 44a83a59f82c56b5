"""What the nightly run (`notes promote --nightly`) leaves behind for `notes status`: a
record of its last run (``<state dir>/nightly.json``) and one line per run in its log
(``<state dir>/nightly.log``). A run that cannot find its store logs in the per-user state
folder instead (:func:`memory.locate.user_state_dir`)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from memory.state.safe_files import write_atomic

RECORD = "nightly.json"
LOG = "nightly.log"
REPORTS = "reports"  # the default report folder, inside the state folder


def default_report_dir(state_dir: Path) -> Path:
    return state_dir / REPORTS


def record_run(folder: Path, report: Path | None, error: str | None,
               now: dt.datetime | None = None) -> None:
    """Record one run in ``folder`` (a state folder): ``report`` written, or ``error``.
    Never raises: a run that cannot record still did its work (or failed with its error)."""
    stamp = (now or dt.datetime.now().astimezone()).isoformat(timespec="seconds")
    record = {"ran": stamp, "ok": error is None, "report": str(report) if report else None,
              "error": error}
    line = f"{stamp} " + (f"ok: {report}" if error is None else f"failed: {error}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / RECORD, json.dumps(record, ensure_ascii=False) + "\n",
                     durable=False)
        with open(folder / LOG, "a", encoding="utf-8") as log:
            log.write(line.replace("\n", " ") + "\n")
    except OSError:
        pass


def last_run(folder: Path) -> dict[str, Any] | None:
    """The record of the last run in ``folder`` (None when there is none, or it is not
    readable)."""
    try:
        data = json.loads((folder / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ran"), str):
        return None
    return data
