"""The notes MCP server, started as ``python mcp_server.py`` (or ``python -m mcp_server``).

A shim kept at the top of the checkout, where Claude Code's settings and the docs point: the
server itself is :mod:`memory.fronts.mcp.server` (``notes serve`` runs the same).
"""

from __future__ import annotations

import sys

from memory.fronts.mcp.costs import catalog, measure_costs, over_budget
from memory.fronts.mcp.server import create_server, main

__all__ = ["catalog", "create_server", "main", "measure_costs", "over_budget"]

if __name__ == "__main__":
    sys.exit(main())
