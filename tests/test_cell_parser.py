"""The Sites table's number parser (dpcore.validation.parse_number_text) and a page's settings link
(dpcore.scenario.settings_link), property-based: every format the table shows or a person types is stored as typed,
anything else is refused with a message, never misread (issue 21: δ typed as 1e-5 was stored as -15)."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from dpcore.scenario import default_scenario, scenario_from_rows, scenario_to_rows
from dpcore.scenario.settings_link import Setting, settings_from_query, settings_to_query
from dpcore.validation import number_text_problem, parse_number_text

finite = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)


def test_the_issues_formats():
    for text, value in (("1e-5", 1e-5), ("1E-05", 1e-5), ("0.00001", 1e-5), ("1 000", 1000.0), ("1,000", 1000.0),
                        ("1e-05", 1e-5), (" 2.5e+3 ", 2500.0), ("1\u00a0000", 1000.0), ("1'000", 1000.0),
                        ("12,345,678.5", 12345678.5), (".5", 0.5), ("-3", -3.0), ("1\u202f000", 1000.0)):
        assert parse_number_text(text) == value, text
    for text in ("0,5", "1,00", "1,0000", "1e", "e5", "--1", "1-5", "inf", "nan", "1 00", "", "1.2.3", "0x10"):
        assert parse_number_text(text) is None, text
        assert number_text_problem(text)
    assert "write decimals with a point" in number_text_problem("0,5")


@given(finite)
def test_every_way_python_writes_a_float_is_stored_as_typed(x):
    for text in (repr(x), f"{x:e}", f"{x:E}", f"{x:g}", f"{x:.3e}", str(x).upper()):
        assert parse_number_text(text) == float(text)


@given(st.integers(min_value=0, max_value=10**15), st.sampled_from([",", " ", "\u00a0", "\u202f", "'"]))
def test_thousands_separators(n, sep):
    grouped = f"{n:,}".replace(",", sep)
    assert parse_number_text(grouped) == float(n)
    assert parse_number_text(f"-{grouped}.25") == -(n + 0.25)


@given(st.text(max_size=30))
def test_any_text_is_a_number_or_a_message_never_an_exception(text):
    value = parse_number_text(text)
    if value is None:
        assert number_text_problem(text)
        return
    assert number_text_problem(text) is None
    digits = "".join(c for c in text.strip() if c not in ",'\u00a0\u202f\u2009 " and not c.isspace())
    assert math.isinf(value) or value == float(digits)  # only the separators were dropped
    assert (value < 0) == (text.strip().startswith("-") and value != 0)


@given(st.integers(min_value=0, max_value=999), st.integers(min_value=0, max_value=99).filter(lambda d: d % 10))
def test_a_decimal_comma_is_refused_not_misread(whole, decimals):
    assert parse_number_text(f"{whole},{decimals}") is None


@given(st.sampled_from(["1e-5", "1E-05", "0.00001", "1e-05", "0.000010"]))
def test_typed_delta_reaches_the_scenario_as_typed(typed):
    rows = scenario_to_rows(default_scenario())
    rows[0] = dict(rows[0], delta=typed, eps="0,5")
    errors, _ = scenario_from_rows(rows)
    assert [e.field for e in errors] == ["eps"] and "write decimals with a point" in errors[0].message
    rows[0]["eps"] = "0.5"
    errors, scenario = scenario_from_rows(rows)
    assert errors == [] and scenario.delta[0] == 1e-5


SETTINGS = {
    "p_flag": Setting(default=False, label="flag"),
    "p_count": Setting(default=3, label="count", low=0, high=9),
    "p_share": Setting(default=0.5, label="share", low=0.0, high=1.0),
    "p_name": Setting(default="one-large", label="name", choices=("one-large", "geometric")),
    "p_list": Setting(default=["a", "b"], label="list", choices=("a", "b", "c")),
}
DEFAULTS = {key: setting.default for key, setting in SETTINGS.items()}


@given(st.fixed_dictionaries({}, optional={
    "p_flag": st.booleans(), "p_count": st.integers(0, 9), "p_share": st.floats(0, 1),
    "p_name": st.sampled_from(["one-large", "geometric"]),
    "p_list": st.lists(st.sampled_from("abc"), max_size=3, unique=True)}))
def test_page_settings_round_trip_through_the_link(values):
    query = settings_to_query({**DEFAULTS, **values}, SETTINGS)
    back, problems = settings_from_query(query, SETTINGS)
    assert problems == [] and {**DEFAULTS, **back} == {**DEFAULTS, **values}


@given(st.text(max_size=200))
def test_any_settings_link_gives_allowed_values_or_messages(text):
    back, problems = settings_from_query(text, SETTINGS)
    for key, value in back.items():
        assert type(value) is type(DEFAULTS[key]) or isinstance(DEFAULTS[key], float)
        assert SETTINGS[key].problem(value) is None
    assert isinstance(problems, list)
    wrong, problems = settings_from_query('{"p_count": 12, "p_flag": 1, "other": 2}', SETTINGS)
    assert wrong == {} and len(problems) == 3
