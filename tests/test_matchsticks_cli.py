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


def test_table(capsys):
    out = run(["matchstick-table", "4", "4", "--squares", "0,13-14", "--backend", "cpu"], capsys)
    assert "4972" not in out and "156" in out and "[cpu]" in out


def test_parse_squares():
    assert [s for part in parse_squares("0-3") for s in part] == [0, 1, 2, 3]
    assert parse_squares("0-1000000000") == [range(0, 1000000001)]  # not expanded
    with pytest.raises(argparse.ArgumentTypeError):
        parse_squares("a-b")


def test_table_backend_is_where_it_ran(capsys):
    out = run(["matchstick-table", "2", "2", "--backend", "auto"], capsys)
    assert out.rstrip().splitlines()[-1].startswith("[cpu]")
    assert len(out.strip().splitlines()) == 2 + 6 + 1  # title, header, S = 0..5, time


def test_squares_count_runs_on_the_cpu(capsys):
    out = run(["matchsticks", "2", "2", "--removed", "4", "--squares", "0"], capsys)
    assert "2×2 R=4 S=0: 4" in out and "[cpu]" in out
