#!/usr/bin/env bash
# Install the project for development: a virtual environment with the package and its dev
# tools, plus the MCP Inspector CLI (npm) that the tests use as a real external MCP client.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/pip install -q -e '.[dev,tantivy]'
if ! command -v rg >/dev/null; then  # ripgrep: a baseline of `notes bench perf`
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    apt-get install -y -q ripgrep >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 &&
      apt-get install -y -q ripgrep >/dev/null 2>&1) ||
      echo "install.sh: could not install ripgrep; notes bench perf will use grep -rli" >&2
  else
    echo "install.sh: ripgrep (rg) not found; notes bench perf will use grep -rli" >&2
  fi
fi
if command -v npm >/dev/null; then
  npm install --loglevel=error --no-audit --no-fund --prefix .tools/inspector \
    @modelcontextprotocol/inspector@2.12.0 >/dev/null
else
  echo "install.sh: npm not found; the MCP Inspector test will be skipped" >&2
fi
