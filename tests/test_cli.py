"""The command line, run in-process and as ``python -m gpuqueens``."""

import subprocess
import sys

import pytest

from gpuqueens.cli import main


def test_nqueens_prints_counts_backend_and_time(capsys):
    assert main(["nqueens", "8", "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert "n=8" in out and "total 92" in out and "unique 12" in out and "cpu" in out and " s" in out


def test_nqueens_several_sizes_and_unique(capsys):
    assert main(["nqueens", "4", "5", "--unique", "--backend", "cpu"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[:3] for line in lines] == [["n=4", "unique", "1"], ["n=5", "unique", "2"]]


@pytest.mark.parametrize("argv", [["nqueens", "0"], ["nqueens", "33"]])
def test_bad_sizes_give_a_message_and_exit_2(argv, capsys):
    assert main(argv + ["--backend", "cpu"]) == 2
    assert "gpuqueens: error:" in capsys.readouterr().err


def test_non_integer_size_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["nqueens", "eight"])
    assert exit_info.value.code == 2


def test_checkpoint_option(tmp_path, capsys):
    path = tmp_path / "cli.sqlite"
    assert main(["nqueens", "9", "--backend", "cpu", "--checkpoint", str(path), "--no-progress"]) == 0
    assert path.exists() and "total 352" in capsys.readouterr().out


def test_python_dash_m():
    done = subprocess.run([sys.executable, "-m", "gpuqueens", "nqueens", "6", "--backend", "cpu"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "total 4" in done.stdout


def test_checkpoint_with_several_sizes_is_refused_up_front(tmp_path, capsys):
    path = tmp_path / "two.sqlite"
    assert main(["nqueens", "8", "9", "--backend", "cpu", "--checkpoint", str(path)]) == 2
    assert "one board size at a time" in capsys.readouterr().err
    assert not path.exists()
