"""Evidence reached per token: benches, their adapters, the policies and the report.

A bench is a folder with ``notes/`` (a store) and ``questions.jsonl`` (see
:mod:`memory.bench.questions`). Adapters build benches from LoCoMo
(:mod:`memory.bench.locomo`) and from Claude Code transcripts (:mod:`memory.bench.mining`);
:func:`memory.bench.run.run_bench` runs the policies (:mod:`memory.bench.policies`) and
:mod:`memory.bench.report` writes what they found. See docs/benchmarks.md.
"""

from memory.bench.questions import BenchError, Question, read_questions

__all__ = ["BenchError", "Question", "read_questions"]
