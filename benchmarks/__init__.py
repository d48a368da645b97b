"""Speed and memory measurements; run them all with ``make bench`` (``python -m benchmarks``)."""
