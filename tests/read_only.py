"""Read-only files and directories for the checkpoint tests, also where this process is root."""

from __future__ import annotations

import subprocess


def permission_bits_stop_writes(tmp_path) -> bool:
    """False where this process writes read-only files anyway (root, some file systems)."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    probe.chmod(0o444)
    try:
        with open(probe, "ab"):
            return False
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)
        probe.unlink()


class ReadOnly:
    """Makes files and directories read-only and writable again. Where permission bits do
    not stop this process (root), the immutable attribute (``chattr +i``) is set as well,
    which stops root too, so that these tests run on root's CI machines."""

    def __init__(self, immutable: bool) -> None:
        self.immutable = immutable
        self.locked: list = []

    def lock(self, path) -> None:
        path.chmod(0o555 if path.is_dir() else 0o444)
        if self.immutable:
            subprocess.run(["chattr", "+i", str(path)], check=True)
        self.locked.append(path)

    def unlock(self, path) -> None:
        if self.immutable:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        path.chmod(0o755 if path.is_dir() else 0o644)
        self.locked.remove(path)


def immutable_attribute_stops_writes(tmp_path) -> bool:
    """Whether ``chattr +i`` works here and stops this process from writing."""
    probe = tmp_path / "probe"
    probe.write_bytes(b"")
    try:
        if subprocess.run(["chattr", "+i", str(probe)], capture_output=True).returncode != 0:
            return False
    except OSError:  # no chattr
        return False
    try:
        with open(probe, "ab"):
            return False
    except PermissionError:
        return True
    finally:
        subprocess.run(["chattr", "-i", str(probe)], capture_output=True)
        probe.unlink()
