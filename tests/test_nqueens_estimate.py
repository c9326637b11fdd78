"""The N-Queens time model behind the LongRunWarning: it reproduces its calibration and
grows with n as the work does."""

from __future__ import annotations

import warnings

import pytest

import gpuqueens
from gpuqueens.problems.nqueens import estimate
from oeis import A000170


def test_solution_counts_are_the_published_ones_then_extrapolated():
    assert [estimate.solution_count(n) for n in range(1, 28)] == A000170
    ratio_27 = A000170[26] / A000170[25]
    ratio_28 = estimate.solution_count(28) / A000170[26]
    assert ratio_27 < ratio_28 < ratio_27 * 1.1  # the ratio keeps growing, slowly


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_model_reproduces_its_measurements(backend):
    for n, seconds in estimate.MEASURED_SECONDS[backend].items():
        assert seconds / 2 < estimate.estimated_seconds(n, backend) < seconds * 2


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_time_grows_with_n(backend):
    times = [estimate.estimated_seconds(n, backend) for n in range(6, gpuqueens.MAX_N + 1)]
    assert times == sorted(times) and times[-1] > 3600 * 24 * 365


def test_the_gpu_is_far_faster_and_workers_share_the_work():
    assert estimate.estimated_seconds(22, "gpu") * 1000 < estimate.estimated_seconds(22, "cpu")
    assert estimate.estimated_seconds(22, "cpu", workers=4) == pytest.approx(
        estimate.estimated_seconds(22, "cpu") / 4)


@pytest.mark.parametrize("n, backend, warns", [(16, "cpu", False), (21, "cpu", True),
                                               (22, "gpu", False), (24, "gpu", True)])
def test_warning_above_an_hour(n, backend, warns):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        estimate.warn_if_long_count(n, backend)
    assert len(caught) == warns
    if warns:
        assert caught[0].category is gpuqueens.LongRunWarning
        assert f"counting n={n} on one" in str(caught[0].message)


def test_warning_names_the_workers():
    with pytest.warns(gpuqueens.LongRunWarning, match="n=26 on 8 workers, each counted as one GPU"):
        estimate.warn_if_long_count(26, "gpu", workers=8)
