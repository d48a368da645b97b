"""Scenario <-> table rows, URL query and uploaded bytes (dpcore.scenario_io)."""

from __future__ import annotations

import base64
import json
import math
import re
import zlib

import pytest

from dpcore.scenario import (
    PRESETS,
    QUERY_VERSION,
    FieldError,
    ScenarioError,
    cell_errors,
    preset_scenario,
    rows_to_dict,
    scenario_from_bytes,
    scenario_from_dict,
    scenario_from_query,
    scenario_from_rows,
    scenario_to_query,
    scenario_to_rows,
    settings_of,
)

WEIGHTED = scenario_from_dict({
    "sites": [{"name": "H1", "n": 300, "eps": 0.2, "delta": 1e-6, "weight": 0.25},
              {"name": "H2", "n": 900, "eps": 1.5, "delta": 1e-6, "weight": 0.75}],
    "neighbouring": "as-published", "calibration": "analytic", "tau_c": 0.01, "seed": 42,
})


def _field_errors(errors: list[FieldError]) -> set[tuple[int | None, str]]:
    return {(e.site, e.field) for e in errors}


@pytest.mark.parametrize("name", list(PRESETS))
def test_rows_round_trip_presets(name):
    scenario = preset_scenario(name)
    errors, back = scenario_from_rows(scenario_to_rows(scenario), **settings_of(scenario))
    assert errors == []
    assert back == scenario


def test_rows_round_trip_with_weights_and_settings():
    rows = scenario_to_rows(WEIGHTED)
    assert rows[1] == {"name": "H2", "n": 900, "eps": 1.5, "delta": 1e-6, "weight": 0.75}
    errors, back = scenario_from_rows(rows, **settings_of(WEIGHTED))
    assert errors == [] and back == WEIGHTED


def test_blank_cells_are_missing_and_reported_per_cell():
    rows = scenario_to_rows(preset_scenario("equal"))
    rows[1]["eps"] = float("nan")  # what the data editor gives for an emptied number cell
    rows[3]["name"] = "   "
    rows[4]["n"] = None
    errors, scenario = scenario_from_rows(rows, neighbouring="replace-one", calibration="classic")
    assert scenario is None
    assert _field_errors(errors) == {(1, "eps"), (3, "name"), (4, "n")}
    eps_error = next(e for e in errors if e.field == "eps")
    assert "missing" in eps_error.message and eps_error.site_name == "B"


def test_blank_weight_column_means_size_weights_and_float_sizes_become_integers():
    rows = [{"name": "A", "n": 1000.0, "eps": 0.5, "delta": 1e-5, "weight": float("nan")},
            {"name": "B", "n": 3000.0, "eps": 0.5, "delta": 1e-5, "weight": None}]
    errors, scenario = scenario_from_rows(rows)
    assert errors == []
    assert scenario.sizes.tolist() == [1000, 3000]
    assert scenario.weights().tolist() == [0.25, 0.75]
    assert not scenario.weights_given


def test_non_integer_size_negative_eps_and_partial_weights():
    rows = [{"name": "A", "n": 10.5, "eps": -1.0, "delta": 1e-5, "weight": 0.5},
            {"name": "B", "n": 100, "eps": 0.5, "delta": 2.0, "weight": None}]
    errors, scenario = scenario_from_rows(rows)
    assert scenario is None
    assert _field_errors(errors) == {(0, "n"), (0, "eps"), (1, "delta")}
    # once the cells are fixed, the missing weight of B is reported
    rows[0].update(n=10, eps=1.0)
    rows[1]["delta"] = 1e-5
    errors, _ = scenario_from_rows(rows)
    assert _field_errors(errors) == {(1, "weight")}


def test_pandas_missing_values_and_numpy_scalars():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame([{"name": "A", "n": 5, "eps": 0.5, "delta": 1e-5, "weight": None},
                          {"name": "B", "n": 7, "eps": 0.25, "delta": 1e-5, "weight": None}])
    frame["n"] = frame["n"].astype("Int64")
    frame.loc[1, "n"] = pd.NA
    errors, _ = scenario_from_rows(frame.to_dict("records"))
    assert _field_errors(errors) == {(1, "n")}
    frame.loc[1, "n"] = 7
    errors, scenario = scenario_from_rows(frame.to_dict("records"))
    assert errors == [] and scenario.sizes.tolist() == [5, 7]
    assert json.loads(scenario.to_json())["sites"][0]["n"] == 5  # plain int after conversion


def test_rows_to_dict_settings_blank_tau_c_is_floor():
    data = rows_to_dict([], neighbouring="as-published", calibration="analytic", tau_c=float("nan"), seed=None)
    assert data == {"sites": [], "neighbouring": "as-published", "calibration": "analytic", "tau_c": None, "seed": 0}


def test_cell_errors_map_every_message_to_its_cell():
    rows = [{"name": "A", "n": 10, "eps": 0.5, "delta": 1e-5, "weight": 0.5},
            {"name": "B", "n": 10, "eps": 0.5, "delta": 1e-5, "weight": 0.6}]
    errors, _ = scenario_from_rows(rows, calibration="nope")
    cells = cell_errors(errors, len(rows))
    assert set(cells) == {(0, "weight"), (1, "weight"), (None, "calibration")}
    assert "sum to 1" in cells[(0, "weight")][0] and "1.1" in cells[(1, "weight")][0]
    assert "classic" in cells[(None, "calibration")][0]
    malformed = [FieldError("site", "must be an object", 2)]
    assert cell_errors(malformed, 3) == {(2, "name"): ["must be an object"]}


@pytest.mark.parametrize("scenario", [preset_scenario(n) for n in PRESETS] + [WEIGHTED])
def test_query_round_trip_is_url_safe(scenario):
    value = scenario_to_query(scenario)
    assert value.startswith(QUERY_VERSION)
    assert re.fullmatch(r"[A-Za-z0-9_.\-]+", value)
    assert scenario_from_query(value) == scenario


def test_query_accepts_plain_json_and_repeated_parameters():
    text = json.dumps(preset_scenario("equal").to_dict())
    assert scenario_from_query(text) == preset_scenario("equal")
    assert scenario_from_query(["garbage", scenario_to_query(WEIGHTED)]) == WEIGHTED


def _link_message(value) -> str:
    with pytest.raises(ScenarioError) as info:
        scenario_from_query(value)
    return str(info.value)


def test_malformed_queries_say_what_is_wrong():
    good = scenario_to_query(preset_scenario("default"))
    assert "must start with" in _link_message("hello")
    assert "no scenario" in _link_message("")
    assert "not base64url" in _link_message("1.a*b")
    assert "cannot be decompressed" in _link_message("1.AAAAAAAA")
    assert "cut short" in _link_message(good[: len(good) // 2])
    assert "not valid JSON" in _link_message('{"sites": [')
    assert "too long" in _link_message("1." + "A" * 60_000)


def test_query_with_invalid_scenario_lists_field_errors():
    data = preset_scenario("equal").to_dict()
    data["sites"][2]["eps"] = 0
    packed = zlib.compress(json.dumps(data).encode())
    value = "1." + base64.urlsafe_b64encode(packed).decode().rstrip("=")
    with pytest.raises(ScenarioError) as info:
        scenario_from_query(value)
    assert [(e.site, e.field) for e in info.value.errors] == [(2, "eps")]


def test_query_refuses_a_decompression_bomb():
    packed = zlib.compress(b" " * 3_000_000, 9)
    value = "1." + base64.urlsafe_b64encode(packed).decode().rstrip("=")
    assert len(value) < 50_000
    assert "more than" in _link_message(value)


def test_uploaded_bytes():
    assert scenario_from_bytes(WEIGHTED.to_json().encode("utf-8-sig")) == WEIGHTED
    with pytest.raises(ScenarioError, match="UTF-8"):
        scenario_from_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ScenarioError, match="too large"):
        scenario_from_bytes(b" " * 1_000_001)
    with pytest.raises(ScenarioError, match="delta"):
        scenario_from_bytes(b'{"sites": [{"name": "A", "n": 10, "eps": 1, "delta": 1}]}')


def test_query_value_is_short_enough_for_a_link():
    # 30 sites with long names stay well under common URL limits (about 8 kB)
    sites = [{"name": f"hospital-{i:02d}", "n": 100 + 37 * i, "eps": 0.1 + 0.01 * i, "delta": 1e-6}
             for i in range(30)]
    value = scenario_to_query(scenario_from_dict({"sites": sites}))
    assert len(value) < 2_000
    assert math.isclose(scenario_from_query(value).eps[-1], 0.39)
