"""A long N-Queens run killed with SIGKILL and rerun ends with the exact answer."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from oeis import total, unique

N = 16  # 16 CPU units of a fraction of a second each


def _rows(path):
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            return [row[0] for row in db.execute("SELECT key FROM units")]
        finally:
            db.close()
    except sqlite3.Error:
        return []


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_sigkill_then_resume_gives_the_exact_count(tmp_path):
    path = tmp_path / "n16.sqlite"
    command = [sys.executable, "-m", "gpuqueens", "nqueens", str(N), "--backend", "cpu",
               "--checkpoint", str(path), "--no-progress"]
    victim = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while len(_rows(path)) < 3 and time.monotonic() < deadline and victim.poll() is None:
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=60)  # (and closes its pipes; its workers follow it out)
    finished_before = _rows(path)
    assert 3 <= len(finished_before) < 16, "the run was not killed mid-way"

    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"total {total(N)}  unique {unique(N)}" in done.stdout
    keys = _rows(path)
    assert len(keys) == len(set(keys)) == 17  # 16 prefix units and the symmetric unit
    assert set(finished_before) <= set(keys)
