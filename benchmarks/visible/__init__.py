"""`python -m benchmarks visible`: every visible bench (re)built and run, and one summary of them.

The visible benches are those every helper can build: LoCoMo (a note per conversation, or a
note per session; direct questions, or vague follow-ups) from the shared ``locomo10.json``,
and the example store's follow-ups (``benchmarks/followups/``). :mod:`benchmarks.visible.run`
builds and runs them; :mod:`benchmarks.visible.summary` reads the reports into the summary
(the best ladder-family policy's curve margin, routing, the follow-ups' keep ratios).
"""
