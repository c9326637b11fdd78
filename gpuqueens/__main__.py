"""``python -m gpuqueens``: the same command line as ``gpuqueens``."""

from .cli import command

raise SystemExit(command())
