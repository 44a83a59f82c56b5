"""Whoosh's multiprocessing writer, guarded (see :mod:`memory.index.whoosh.build`).

Imported only when a build uses worker processes, so that the CLI and the prompt hook, which
import the index on every call, do not import ``multiprocessing``.
"""

from __future__ import annotations

import os
import queue
import sys
from typing import Any

from whoosh.multiproc import MpWriter, SubWriterTask
from whoosh.writing import SegmentWriter

from memory.index.backend import ParallelBuildFailed
from memory.index.locks import close_inherited_locks, die_with_parent, touch


class _GuardedTask(SubWriterTask):  # type: ignore[misc]
    """A worker that dies with the process that forked it (a build killed with SIGKILL must
    not leave workers holding the build lock or writing into a folder being deleted), holds
    no copy of the parent's build lock, and touches the lock file as it works (progress, for
    a waiter: memory.index.locks). A failure is one line on stderr, not a traceback; the
    parent notices the missing segment and builds again in one process."""

    def __init__(self, *args: Any, parent: int, heartbeat: str | None) -> None:
        super().__init__(*args)
        self.parent, self.heartbeat = parent, heartbeat

    def run(self) -> None:
        die_with_parent(self.parent)
        close_inherited_locks()
        try:
            super().run()
        except BaseException as exc:  # this process only; the parent handles the rest
            sys.stderr.write(f"notes: an index worker stopped ({type(exc).__name__}: {exc})\n")
            sys.stderr.flush()
            os._exit(1)

    def _process_file(self, filename: str, doc_count: int) -> None:
        super()._process_file(filename, doc_count)
        if self.heartbeat:
            touch(self.heartbeat)


class _Handover:
    """The parent's end of the job queue: a put gives up once no worker is left to take it
    (Whoosh's blocks forever on a full queue)."""

    def __init__(self, jobs: Any, tasks: list[SubWriterTask]) -> None:
        self.jobs, self.tasks = jobs, tasks

    def put(self, item: Any) -> None:
        while True:
            try:
                self.jobs.put(item, timeout=0.5)
                return
            except queue.Full:
                if not any(task.is_alive() for task in self.tasks):
                    raise ParallelBuildFailed(
                        "every worker of the parallel build stopped") from None


class GuardedMpWriter(MpWriter):  # type: ignore[misc]
    """Whoosh's multiprocessing writer, with its workers as daemons (an aborted build cannot
    keep this process waiting for them at exit) that die with it (`_GuardedTask`), a cancel
    that stops them (Whoosh's only sets a flag in this process's copy of each), a hand-over
    that notices dead workers, and its queues closed at the end (their feeder threads would
    otherwise outlive the build)."""

    def __init__(self, ix: Any, heartbeat: str | None = None, **kwargs: Any) -> None:
        super().__init__(ix, **kwargs)
        self._jobs: Any = self.__dict__["jobqueue"]
        self.jobqueue: Any = _Handover(self._jobs, self.tasks)
        self.heartbeat = heartbeat  # the build lock's file, touched by the workers

    def _new_task(self) -> SubWriterTask:
        task = _GuardedTask(self.storage, self.indexname, self._jobs, self.resultqueue,
                            self.subargs, self.multisegment, parent=os.getpid(),
                            heartbeat=self.heartbeat)
        task.daemon = True
        self.tasks.append(task)
        task.start()
        return task

    def commit(self, *args: Any, **kwargs: Any) -> None:
        try:
            super().commit(*args, **kwargs)
        finally:
            self._close_queues()

    def cancel(self) -> None:
        for task in self.tasks:
            if task.is_alive():
                task.terminate()
            task.join(timeout=5)
        try:
            SegmentWriter.cancel(self)
        finally:
            self._close_queues()

    def _close_queues(self) -> None:
        """End the queues' feeder threads, so that this process has no other thread again
        (a later build here may fork) once the build is over."""
        for channel in (self._jobs, self.resultqueue):
            channel.close()
            channel.join_thread()
