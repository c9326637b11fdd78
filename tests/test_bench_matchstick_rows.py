"""bench/cpu_matchstick_rows.py: the table's rows checked through problem 2, on small grids."""

import pytest
from scripts import load_script


@pytest.fixture(scope="module")
def rows_script():
    return load_script("bench/cpu_matchstick_rows.py")


def test_every_row_of_a_small_table_agrees(rows_script, capsys):
    # 3×4 by the whole-grid sweep; 6×6's first rows by the centre join
    assert rows_script.main(["3x4"]) == 0
    assert rows_script.main(["6x6", "--squares", "0-2"]) == 0
    out = capsys.readouterr().out
    assert out.count("all rows agree") == 2 and "DIFFERENT" not in out
    assert "S=0   R=19  ways 16: problem 2 gives 16 at R, 0 at R-1" in out


def test_a_row_that_disagrees_fails(rows_script, capsys, monkeypatch):
    real = rows_script.gpuqueens.matchsticks
    monkeypatch.setattr(rows_script.gpuqueens, "matchsticks", lambda *a, **k: real(*a, **k) + 1)
    assert rows_script.main(["2x2"]) == 1
    assert "DIFFERENT" in capsys.readouterr().out


def test_a_bad_grid_is_refused(rows_script):
    with pytest.raises(SystemExit):
        rows_script.main(["7by7"])
