"""What the GPU benchmark scripts share: a one-line exit where there is no CuPy."""

from __future__ import annotations


def require_cupy(script: str) -> None:
    """End the script with one line (exit 1) when CuPy cannot be imported: it needs a GPU."""
    try:
        import cupy  # noqa: F401
    except ImportError as exc:
        raise SystemExit(
            f"{script}: error: this benchmark needs CuPy and an NVIDIA GPU ({exc}); in the "
            f'repository: pip install ".[cuda12]" (or ".[cuda13]"), or dry-run it without a GPU: '
            f"python tests/fake_gpu_run.py bench/{script}.py ...") from None
