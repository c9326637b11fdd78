import pytest

from gpuqueens._checks import MAX_N, check_board_size, check_int


def test_check_int_accepts_integers_in_range():
    assert check_int("r", 3, low=0, high=5) == 3


@pytest.mark.parametrize("value", [True, 1.0, "1", None, 1.5])
def test_check_int_refuses_non_integers(value):
    with pytest.raises(TypeError, match="r must be an integer"):
        check_int("r", value)


def test_check_int_range_messages():
    with pytest.raises(ValueError, match="at least 0"):
        check_int("r", -1, low=0)
    with pytest.raises(ValueError, match="at most 5"):
        check_int("r", 6, high=5)


def test_board_size_limit():
    assert check_board_size(MAX_N) == MAX_N
    with pytest.raises(ValueError, match="largest supported"):
        check_board_size(MAX_N + 1)
