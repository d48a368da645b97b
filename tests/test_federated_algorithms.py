"""The federated-algorithm table (dpcore.federation.FEDERATED_ALGORITHMS): every list of the round reads it, its
hooks give what the title branches gave, and RoundStage.iid is the rule it replaced."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from dpcore.federation import (
    FEDERATED_ALGORITHMS,
    ROUND_OUTPUTS,
    ROUND_STAGES,
    RoundSettings,
    SiteBudget,
    federated_algorithm,
    plan_round,
)
from dpcore.scenario import Site
from dpcore.validation import InputError


def _budgets(dim: int) -> list[SiteBudget]:
    return [SiteBudget(site=Site(name=name, n=n, eps=1.0, delta=1e-5), dim=dim)
            for name, n in (("north", 800), ("east", 600), ("south", 400), ("west", 500))]


def test_the_round_lists_are_the_tables():
    assert ROUND_STAGES == {name: entry.stages for name, entry in FEDERATED_ALGORITHMS.items()}
    assert ROUND_OUTPUTS == {name: entry.output for name, entry in FEDERATED_ALGORITHMS.items()}
    assert list(FEDERATED_ALGORITHMS) == ["capePCA", "capeAGN"]
    with pytest.raises(InputError, match="capePCA"):
        federated_algorithm("capeLDA")


@pytest.mark.parametrize(("algorithm", "path", "law"), [
    ("capePCA", "dense", "published"),
    *itertools.product(["capeAGN"], ["dense", "projected"], ["published", "symmetrized"])])
def test_a_stage_is_iid_exactly_where_the_old_rule_said(algorithm, path, law):
    """The rule the site's variance check used before the table: every stage but M3, and M3 on the dense path under
    the published law."""
    settings = RoundSettings(algorithm=algorithm, k=3, path=path, m3_noise=law)
    plan = plan_round(_budgets(10), settings)
    assert plan.refusal is None, plan.refusal
    for stage in plan.stages:
        old = stage.stage != "M3" or (path == "dense" and law == "published")
        assert stage.iid == old, (stage.stage, path, law)


@pytest.mark.parametrize(("algorithm", "path", "limit"), [("capePCA", "dense", "MAX_FEDERATED_MATRIX_DIM"),
                                                          ("capeAGN", "dense", "MAX_FEDERATED_TENSOR_DIM"),
                                                          ("capeAGN", "projected", "MAX_FEDERATED_MATRIX_DIM")])
def test_the_dimension_limit_comes_from_the_entry(algorithm, path, limit):
    from dpcore import limits
    top = getattr(limits, limit)
    settings = RoundSettings(algorithm=algorithm, k=2, path=path)
    assert federated_algorithm(algorithm).dim_limit(settings) == top
    plan = plan_round(_budgets(top + 1), settings)
    assert plan.refusal is not None and f"outside 2..{top}" in plan.refusal
    assert ("path" in plan.refusal) == (algorithm == "capeAGN")


def test_the_mixture_needs_its_settings_and_the_pca_round_does_not():
    with pytest.raises(InputError, match="MOG model needs"):
        RoundSettings(algorithm="capeAGN", k=2, model="mog").validated()
    RoundSettings(algorithm="capePCA", k=2, model="mog").validated()


@pytest.mark.parametrize("algorithm", list(FEDERATED_ALGORITHMS))
def test_synthetic_data_have_the_budgets_shape(algorithm):
    """A dry run's data: the entry's synthetic hook gives data a site's statistic reads at N_s and D."""
    from dpcore.federation import site_statistic
    budget = _budgets(6)[0]
    settings = RoundSettings(algorithm=algorithm, k=2)
    data = federated_algorithm(algorithm).synthetic(budget, settings, np.random.default_rng(7))
    other = federated_algorithm(algorithm).synthetic(budget, settings, np.random.default_rng(8))
    first = FEDERATED_ALGORITHMS[algorithm].stages[0]
    stat = site_statistic(first, data)
    assert stat.shape == (6 * 7 // 2,) and np.all(np.isfinite(stat))
    assert not np.array_equal(stat, site_statistic(first, other))
