"""Small text helpers of dpcore.textio used in captions and messages."""

from __future__ import annotations

import numpy as np

from dpcore.textio import LISTED_VALUES, size_text, values_text


def test_values_text_says_each_lists_or_gives_the_range():
    assert values_text(np.full(100, 2000)) == "2,000 each"
    assert values_text([1000, 2500, 400]) == "1,000, 2,500, 400"
    assert values_text(list(range(200, 200 + 100 * (LISTED_VALUES + 1), 100))) == "from 200 to 1,000"
    assert values_text([0.5, 0.25], "g") == "0.5, 0.25"
    assert values_text([1e-5] * 3, "g") == "1e-05 each"


def test_size_text():
    assert size_text(1000) == "1,000 bytes"
    assert size_text(64 * 10**6) == "64.0 MB"  # MB = 10^6 bytes, the browser's unit (issue 24)
    assert size_text(64 * 2**20) == "67.1 MB"
    assert size_text(999_999) == "999,999 bytes"


def test_json_ready_gives_values_any_json_reader_accepts():
    import json
    import math

    import numpy as np

    from dpcore.textio import json_ready

    value = {"a": np.float64(0.5), 3: (np.int64(2), np.bool_(True)), "nan": float("nan"), "inf": np.float32("inf"),
             "grid": np.array([1.0, np.nan]), "nested": [{"x": -math.inf}]}
    ready = json_ready(value)
    assert ready == {"a": 0.5, "3": [2, True], "nan": None, "inf": None, "grid": [1.0, None], "nested": [{"x": None}]}
    assert type(ready["a"]) is float and type(ready["3"][0]) is int and type(ready["3"][1]) is bool
    assert json.loads(json.dumps(ready, allow_nan=False)) == ready
