"""Every kernel source builds for the GPUs users have, not only the H100/H200 it is timed on.

CuPy compiles each kernel for the device it runs on: a T4 (sm_75), an A100 (sm_80), an RTX
30 or 40 (sm_86, sm_89), an H100 (sm_90), a Blackwell card (sm_100, sm_120). nvcc with
-cubin runs ptxas for each, so the inline PTX (the byte permute, the predicated AND) is
checked for each architecture too. Only the architectures that this nvcc supports are built
(CUDA 13 starts at sm_75). No GPU needed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.nvcc,
    pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed"),
]

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "kernels").glob("*.cu"))
# one architecture of each family people run: Turing, Ampere (data centre, consumer), Ada,
# Hopper, Blackwell (data centre, consumer)
FAMILIES = (75, 80, 86, 89, 90, 100, 120)
# the N-Queens search's loop must keep its state in registers on every architecture
NO_SPILLS = {"nqueens.cu"}


def _supported() -> list[int]:
    listed = subprocess.run(["nvcc", "--list-gpu-arch"], capture_output=True, text=True, timeout=60)
    return sorted({int(m) for m in re.findall(r"compute_(\d+)\b", listed.stdout)})


@pytest.mark.parametrize("source", SOURCES, ids=[p.name for p in SOURCES])
def test_builds_for_every_family_nvcc_supports(tmp_path, source):
    archs = [a for a in FAMILIES if a in _supported()]
    assert archs, "nvcc lists none of the architectures of FAMILIES"
    gencode = [f"-gencode=arch=compute_{a},code=sm_{a}" for a in archs]
    result = subprocess.run(["nvcc", *gencode, "-fatbin", "-O3", "--resource-usage",
                             "-o", str(tmp_path / "kernel.fatbin"), str(source)],
                            capture_output=True, text=True, timeout=600)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    built = set(re.findall(r"for 'sm_(\d+)'", report))
    assert built == {str(a) for a in archs}, report
    if source.name in NO_SPILLS:
        spills = re.findall(r"([1-9]\d*) bytes spill (?:stores|loads)", report)
        assert not spills, report
