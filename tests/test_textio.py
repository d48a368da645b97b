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
