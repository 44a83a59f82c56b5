"""The MCP server (:mod:`.server`) and what serves it: tools, costs, guards.

The HTTP session defaults live here, not in :mod:`.http_guard`, so that `notes serve`'s help
can show them without importing the guard (start-up time of every `notes --help`).
"""

DEFAULT_MAX_SESSIONS = 100  # live HTTP sessions at most
DEFAULT_SESSION_IDLE_S = 30 * 60  # seconds before an idle HTTP session is closed
