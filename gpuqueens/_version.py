"""The gpuqueens version, in a module of its own so that any module can read it without
importing the package (and so without an import that runs back up the layers)."""

__version__ = "0.1.0"
