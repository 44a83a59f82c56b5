"""The notes MCP server, started as ``python mcp_server.py`` (or ``python -m mcp_server``).

A shim kept at the top of the checkout, where Claude Code's settings and the docs point: the
server itself is :mod:`memory.fronts.mcp.server` (``notes serve`` runs the same). Its names
load when first used, so that ``--help`` or a usage error answers without importing fastmcp
(about half a second of CPU), as ``notes serve`` does.
"""

from __future__ import annotations

import sys

from memory.lazy_names import lazy_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memory.fronts.mcp.costs import catalog, measure_costs, over_budget
    from memory.fronts.mcp.server import create_server, main

_HOMES = {"memory.fronts.mcp.costs": ("catalog", "measure_costs", "over_budget"),
          "memory.fronts.mcp.server": ("create_server", "main")}
__all__ = ["catalog", "create_server", "main", "measure_costs", "over_budget"]
__getattr__, __dir__ = lazy_names(__name__, _HOMES, __all__)

if __name__ == "__main__":
    from memory.fronts.cli.serve import serve_script

    # what memory.fronts.mcp.server.main runs: the server is imported once it starts
    serve_script().main(prog_name="mcp_server.py")
    sys.exit(0)
