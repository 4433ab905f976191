"""``python -m longbench100`` runs the command line."""

from .cli import entry

entry()
