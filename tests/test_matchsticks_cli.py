"""The three matchstick subcommands, driven through argparse."""

import argparse

import pytest

from gpuqueens.problems.matchsticks.cli import parse_squares, register


def run(argv, capsys):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    assert args.handler(args) == 0
    return capsys.readouterr().out


def test_matchsticks_with_squares(capsys):
    out = run(["matchsticks", "4", "4", "--removed", "9", "--squares", "0", "--backend", "cpu"], capsys)
    assert "4×4 R=9 S=0: 16" in out and "[cpu]" in out and " s" in out


def test_matchsticks_removed_only(capsys):
    assert "22278" in run(["matchsticks", "10", "10", "--removed", "2", "--backend", "cpu"], capsys)


def test_counts(capsys):
    out = run(["matchstick-counts", "2", "2", "--backend", "cpu"], capsys)
    assert "R=12   1" in out and "total  43" in out


def test_counts_progress(capsys):
    pytest.importorskip("tqdm")
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["matchstick-counts", "3", "3", "--backend", "cpu", "--progress"])
    assert args.handler(args) == 0
    out, err = capsys.readouterr()
    assert "total  " in out and "3×3 by R" in err and "100%" in err
    args = parser.parse_args(["matchstick-counts", "3", "3", "--backend", "cpu", "--no-progress"])
    assert args.handler(args) == 0
    quiet_out, quiet_err = capsys.readouterr()
    assert quiet_err == "" and quiet_out.splitlines()[:-1] == out.splitlines()[:-1]  # not the time


def test_table(capsys):
    out = run(["matchstick-table", "4", "4", "--squares", "0,13-14", "--backend", "cpu"], capsys)
    assert "4972" not in out and "156" in out and "[cpu]" in out


def test_parse_squares():
    assert [s for part in parse_squares("0-3") for s in part] == [0, 1, 2, 3]
    assert parse_squares("0-1000000000") == [range(0, 1000000001)]  # not expanded
    with pytest.raises(argparse.ArgumentTypeError):
        parse_squares("a-b")
    with pytest.raises(argparse.ArgumentTypeError, match="a range goes up, as in 1-3"):
        parse_squares("0,3-1")
    assert parse_squares(" 2 - 4 ,7") == [range(2, 5), range(7, 8)]
    for bad in ("1--2", "-1", "+3", "1-", "3-4-5", ""):  # signs read as numbers once ("1--2":
        with pytest.raises(argparse.ArgumentTypeError, match="takes numbers and ranges"):
            parse_squares(bad)                           # "a range goes up, as in -2-1")


@pytest.mark.parametrize("command", ["matchsticks", "matchstick-counts", "matchstick-table"])
def test_a_grid_written_4x4_gets_a_hint(command, capsys):
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command", required=True))
    with pytest.raises(SystemExit):
        parser.parse_args([command, "4x4", "--removed", "9"])
    assert "give the rows and the columns as two numbers, 4 4" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args([command, "four", "4"])
    err = capsys.readouterr().err
    assert "'four' is not a whole number" in err and "two numbers" not in err


def test_an_s_beyond_the_grid_says_what_may_be_asked(capsys):
    with pytest.raises(ValueError, match=r"S=6 is more than the 5 squares of a 2×2 grid \(S may be 0 to 5"):
        run(["matchstick-table", "2", "2", "--squares", "0-14", "--backend", "cpu"], capsys)


@pytest.mark.parametrize("argv", [["matchsticks", "0", "2", "--removed", "1"],
                                  ["matchsticks", "2", "2", "--removed", "13"],
                                  ["matchstick-counts", "0", "1"]])
def test_bad_input_is_refused_before_the_backend_is_chosen(argv, capsys, monkeypatch):
    # (so that a machine without a GPU prints the error alone, not the fallback warning first)
    from gpuqueens.problems.matchsticks import cli

    def chosen(*_args, **_kwargs):
        raise AssertionError("the backend was chosen before the arguments were checked")

    monkeypatch.setattr(cli, "by_removed_backend", chosen)
    monkeypatch.setattr(cli, "square_tracking_backend", chosen)
    monkeypatch.setattr("gpuqueens.problems.matchsticks.api.resolve_backend", chosen)
    with pytest.raises(ValueError):
        run(argv, capsys)


def test_table_backend_is_where_it_ran(capsys):
    out = run(["matchstick-table", "2", "2", "--backend", "auto"], capsys)
    assert out.rstrip().splitlines()[-1].startswith("[cpu]")
    assert len(out.strip().splitlines()) == 2 + 6 + 1  # title, header, S = 0..5, time


def test_squares_count_runs_on_the_cpu(capsys):
    out = run(["matchsticks", "2", "2", "--removed", "4", "--squares", "0"], capsys)
    assert "2×2 R=4 S=0: 4" in out and "[cpu]" in out
