"""Every sweep result, stored presets included, carries the guarantee of every view of every algorithm at every grid
value, computed from the preset's scenario and designs (issue 21's leftover; docs/experiments.md)."""

from __future__ import annotations

import json

import pytest

from dpcore.experiments import get_preset
from dpcore.experiments.designs import GUARANTEE_COLUMNS, grid_designs, sweep_guarantees
from dpcore.experiments.spec import scenario_at
from dpcore.experiments.stored import stored_result
from dpcore.pca import pca_privacy
from dpcore.pca.guarantees import pca_guarantees


@pytest.mark.parametrize("name", ["fig2a-synthetic-eps", "fig3-mog-d10-ns", "lda-cape-eps"])
def test_stored_presets_carry_every_view(name):
    stored = stored_result(name)
    assert stored is not None
    table = stored.result.guarantees()
    spec = stored.result.spec
    assert list(table.columns) == list(GUARANTEE_COLUMNS)
    assert set(table["value"]) == {float(v) for v in spec.grid}
    assert set(table["algorithm"]) == set(spec.algorithms)
    assert {"release", "aggregator"} <= set(table["view"])
    assert not table[table["algorithm"] == "nonpriv"]["certified"].any()
    record = json.loads(stored.result.export_json())
    assert record["version"] and record["spec"]["seed"] == spec.seed and len(record["guarantees"]) == len(table)


def test_a_grid_point_gets_what_the_audit_says_of_its_design():
    spec = get_preset("fig2a-synthetic-eps").spec
    value = spec.grid[2]
    scenario = scenario_at(spec, value)
    privacy = pca_privacy(scenario, grid_designs(spec, scenario, value)["capePCA"])
    expected = [g.label() for g in pca_guarantees("cape", privacy)]
    table = sweep_guarantees(spec)
    got = table[(table["value"] == float(value)) & (table["algorithm"] == "cape")]["label"].tolist()
    assert got == expected
