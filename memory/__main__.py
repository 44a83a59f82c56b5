"""``python -m memory`` runs the `notes` command line."""

from memory.fronts.entry import main

main()
