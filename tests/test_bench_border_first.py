"""bench/border_first_nodes.c, the node count behind "fixing the border queens first".

The program weighs one border constellation per symmetry orbit by the orbit's size and
refuses (exit 1) when the weighted solutions differ from its plain search; here both must
also be the OEIS count.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from oeis import A000170

SOURCE = Path(__file__).resolve().parent.parent / "bench" / "border_first_nodes.c"
COMPILER = shutil.which("cc") or shutil.which("gcc")

pytestmark = pytest.mark.skipif(COMPILER is None, reason="no C compiler")


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    binary = tmp_path_factory.mktemp("border_first") / "border_first_nodes"
    subprocess.run([COMPILER, "-O2", "-o", str(binary), str(SOURCE)], check=True)
    return binary


@pytest.mark.parametrize("n", [5, 6, 8, 10, 11])
def test_weighted_constellations_give_every_solution(program, n):
    out = subprocess.run([str(program), str(n)], capture_output=True, text=True, check=True).stdout
    assert int(re.search(r"solutions (\d+)", out).group(1)) == A000170[n - 1]
    nodes = int(re.search(r"(\d+) inner nodes", out).group(1))
    plain = int(re.search(r"plain tree: (\d+) nodes", out).group(1))
    assert 0 < nodes < plain


def test_refuses_sizes_it_cannot_hold(program):
    result = subprocess.run([str(program), "21"], capture_output=True, text=True)
    assert result.returncode == 2 and "usage" in result.stderr
