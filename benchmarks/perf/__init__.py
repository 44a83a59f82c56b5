"""Speed and scale: a generator of realistic stores at any size, and `python -m benchmarks perf`.

- :mod:`benchmarks.perf.generator`: deterministic stores (``--scale 1`` ≈ 220 notes, 1 M cl100k
  tokens) and a query set drawn from them;
- :mod:`benchmarks.perf.run`: the benchmark (index build, freshness, warm ladder, cold processes,
  MCP round trips, server memory, ripgrep and SQLite FTS5 baselines, growth across scales);
- :mod:`benchmarks.perf.report`: the Markdown, JSON and plot it writes.
"""
