"""``python -m benchmarks``: what measures the project (:mod:`benchmarks.cli`)."""

from benchmarks.cli import PROG, lab

lab(prog_name=PROG)
