#!/usr/bin/env bash
# Install the project for development: a virtual environment with the package and its dev
# tools, plus the MCP Inspector CLI (npm) that the tests use as a real external MCP client.
# (A user who only wants the tool: docs/install.md, `pipx install .`.)
set -euo pipefail
cd "$(dirname "$0")/.."
say() { echo "install.sh: $*" >&2; }
started=$SECONDS
say "creating the virtual environment .venv"
python3 -m venv .venv
say "installing notes-memory with its dev tools and the tantivy backend into .venv" \
  "(pip, a few minutes on a first run)"
.venv/bin/pip install -q -e '.[dev,tantivy]'
# An editable install leaves byte-compiling the package to its first imports, which never
# happens where PYTHONDONTWRITEBYTECODE is set: every `notes` process would compile the library
# again (a quarter of a cold prompt hook: 174 against 129 ms). Compile it now, as pip does for a
# regular install.
.venv/bin/python -m compileall -q memory benchmarks mcp_server.py >/dev/null
# ripgrep: only a baseline of `python -m benchmarks perf` (grep -rli stands in without it). A system
# package, so installed only when asked: NOTES_INSTALL_RG=1.
if ! command -v rg >/dev/null; then
  if [ "${NOTES_INSTALL_RG:-}" != 1 ]; then
    say "ripgrep (rg) not found; python -m benchmarks perf will use grep -rli" \
      "(NOTES_INSTALL_RG=1 bash scripts/install.sh installs it with apt-get, as root)"
  elif command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    say "installing ripgrep (apt-get), a baseline of python -m benchmarks perf"
    apt-get install -y -q ripgrep >/dev/null 2>&1 || (apt-get update -q >/dev/null 2>&1 &&
      apt-get install -y -q ripgrep >/dev/null 2>&1) ||
      say "could not install ripgrep; python -m benchmarks perf will use grep -rli"
  else
    say "NOTES_INSTALL_RG=1: installing ripgrep needs apt-get as root; install it by hand" \
      "(apt-get install ripgrep, brew install ripgrep); python -m benchmarks perf uses grep -rli"
  fi
fi
if command -v npm >/dev/null; then
  say "installing the MCP Inspector CLI (npm) into .tools/inspector, for the tests"
  npm install --loglevel=error --no-audit --no-fund --prefix .tools/inspector \
    @modelcontextprotocol/inspector@2.12.0 >/dev/null
else
  say "npm not found; the MCP Inspector test will be skipped"
fi
say "done in $((SECONDS - started)) s: .venv/bin/notes is ready"
