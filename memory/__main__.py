"""``python -m memory`` runs the `notes` command line."""

from .cli import main

main()
