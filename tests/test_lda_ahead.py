"""The runs of an LDA curve prepared ahead (dpcore.lda.ahead, issue 34): the curve is the same number for number with
a finished, a partial or no preparation, in the calling process and on worker processes; a preparation of another
setting is not used; a stopped preparation stops between runs."""

from __future__ import annotations

import threading

import pandas as pd
import pytest

from dpcore.lda import LdaSettings, LdaSpec
from dpcore.lda.ahead import CurvePreparation, prepare_runs
from dpcore.lda.curves import curve_preparation_key, eps_curve, prepare_curve
from dpcore.scenario import equal_sites_scenario
from dpcore.validation import InputError

SPEC = LdaSpec(dim=30, k=3, doc_length=20)
GRID = (10.0, 100.0)
NAMES = ("cape", "conv", "local", "nonpriv", "random")
SITES = equal_sites_scenario(4, 200, GRID[0], 1e-6, calibration="analytic", name_prefix="site ")


def _curve(seed: int, **kw) -> pd.DataFrame:
    return eps_curve(SITES, NAMES, GRID, spec=SPEC, runs=3, seed=seed, **kw).records


def _preparation(seed: int, settings: LdaSettings | None = None) -> CurvePreparation:
    return CurvePreparation(curve_preparation_key(SITES, GRID, spec=SPEC, seed=seed, settings=settings))


@pytest.mark.parametrize("seed", [0, 11])
def test_a_prepared_curve_is_the_same_number_for_number(seed):
    plain = _curve(seed, workers=1)
    full = _preparation(seed)
    prepare_curve(full, SITES, NAMES, GRID, spec=SPEC, runs=3, seed=seed)
    assert sorted(full.runs) == [0, 1, 2]
    assert set(full.runs[0].fixed) == {"nonpriv", "random"}  # the algorithms whose result does not depend on eps
    pd.testing.assert_frame_equal(_curve(seed, workers=1, prepared=full), plain, check_exact=True)
    assert full.stop.is_set()  # the curve asked the preparation to stop
    pd.testing.assert_frame_equal(_curve(seed, workers=2, prepared=full), plain, check_exact=True)
    partial = _preparation(seed)
    partial.runs[1] = full.runs[1]
    pd.testing.assert_frame_equal(_curve(seed, workers=2, prepared=partial), plain, check_exact=True)


def test_a_preparation_of_another_setting_is_not_used():
    other = _preparation(0, LdaSettings(eps_split=0.3))
    assert other.key != _preparation(0).key and other.key != _preparation(1).key
    with pytest.raises(InputError, match="another setting"):
        prepare_curve(other, SITES, NAMES, GRID, spec=SPEC, runs=3, seed=0)
    wrong = _preparation(1)  # seed 1's documents offered to a curve of seed 0
    prepare_curve(wrong, SITES, NAMES, GRID, spec=SPEC, runs=3, seed=1)
    pd.testing.assert_frame_equal(_curve(0, workers=1, prepared=wrong), _curve(0, workers=1), check_exact=True)
    assert not _curve(0, workers=1, prepared=wrong).equals(_curve(1, workers=1))


def test_a_stopped_preparation_stops_between_runs():
    done: list[int] = []
    preparation = _preparation(0)

    def prepare(run: int):
        done.append(run)
        if run == 1:
            preparation.stop.set()
        return object()

    prepare_runs(preparation, 5, prepare)
    assert done == [0, 1] and sorted(preparation.runs) == [0, 1]
    preparation.stop.clear()
    prepare_runs(preparation, 5, prepare)  # resumed: only the runs not yet prepared
    assert done == [0, 1, 2, 3, 4]
    inside = _preparation(0)
    prepare_runs(inside, 5, lambda run: None if run == 2 else object())  # stopped inside run 2: nothing after it
    assert sorted(inside.runs) == [0, 1]


def test_a_run_stopped_inside_is_not_kept():
    from dpcore.lda.ahead import prepare_one
    from dpcore.lda.curves import _setup

    entries, shared, _, _ = _setup(SITES, NAMES, GRID, SPEC, None, 3, 0, None)
    stop = threading.Event()
    stop.set()
    assert prepare_one(shared.run, 0, entries, SITES, stop) is None
    whole = prepare_one(shared.run, 0, entries, SITES, threading.Event())
    assert len(whole.site_m2) == SITES.n_sites and set(whole.fixed) == {"nonpriv", "random"}


def test_the_preparation_holds_at_most_its_bound_of_m2_matrices():
    from dpcore.lda.ahead import MAX_PREPARED_BYTES, prepared_runs

    assert prepared_runs(5, 20, 100) == 5  # the opening setting: 0.8 MB
    for runs, sites, dim in ((50, 100, 1000), (50, 20, 400), (3, 1, 10)):
        count = prepared_runs(runs, sites, dim)
        assert 0 <= count <= runs and count * (sites + 1) * dim * dim * 8 <= MAX_PREPARED_BYTES
        assert count == runs or (count + 1) * (sites + 1) * dim * dim * 8 > MAX_PREPARED_BYTES
    assert prepared_runs(50, 100, 1000) == 0  # 808 MB a run: nothing prepared, the Run draws every run itself
