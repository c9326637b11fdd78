"""The matchstick benchmarks' grid arguments (bench/grid_args.py): what reads as grids and
what is refused."""

from __future__ import annotations

import argparse
import doctest

import pytest

from bench import grid_args
from bench.grid_args import parse_grid, parse_grids


def test_doctests():
    assert doctest.testmod(grid_args).failed == 0


@pytest.mark.parametrize("text, grids", [
    ("3", [(3, 3)]),
    ("4-6", [(4, 4), (5, 5), (6, 6)]),
    ("2x9, 9X2", [(2, 9), (9, 2)]),
    ("1-1,1x1", [(1, 1), (1, 1)]),
])
def test_grids_read(text, grids):
    assert parse_grids(text) == grids


@pytest.mark.parametrize("text, says", [
    ("3x", "a grid is MxN"), ("x", "a grid is MxN"), ("3x4x5", "a grid is MxN"),
    ("0x5", "sides are at least 1"), ("-1", "LO-HI"), ("0", "no grid"),
    ("7-5", "no grid"), ("", "like 5-7,4x9"), ("5,", "like 5-7,4x9"), ("a-b", "like 5-7,4x9"),
])
def test_grids_refused(text, says):
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        parse_grids(text)


def test_one_grid():
    assert parse_grid("12x3") == (12, 3)
    with pytest.raises(argparse.ArgumentTypeError, match="like 7x7"):
        parse_grid("12")
