"""``python -m gpuqueens``: the same command line as ``gpuqueens``."""

from .cli import main

raise SystemExit(main())
