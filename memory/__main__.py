"""``python -m memory`` runs the `notes` command line."""

from memory.fronts.cli import main

main()
