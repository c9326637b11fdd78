"""Read-only files and directories for the checkpoint tests, also where this process is root."""

from __future__ import annotations

import subprocess


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


def read_only_helper(tmp_path) -> ReadOnly | None:
    """A :class:`ReadOnly` that stops this process from writing: permission bits alone,
    else with the immutable attribute (Linux, where ``chattr`` works); ``None`` if neither."""
    for immutable in (False, True):
        helper, probe = ReadOnly(immutable), tmp_path / "probe"
        probe.write_bytes(b"")
        try:
            helper.lock(probe)
            with open(probe, "ab"):
                pass  # written: this helper does not stop this process
        except PermissionError:
            return helper
        except (OSError, subprocess.CalledProcessError):  # no chattr, or not on this file system
            pass
        finally:
            if probe in helper.locked:
                helper.unlock(probe)
            probe.unlink()
    return None
