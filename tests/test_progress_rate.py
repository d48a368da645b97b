"""dpcore.family.progress_rate.throttled: the first and the last step always pass, the steps between at most once per
interval of the given clock, each with its own numbers and label."""

from __future__ import annotations

from dpcore.family.progress_rate import PROGRESS_INTERVAL, throttled


def test_first_last_and_one_step_per_interval_pass():
    now = [0.0]
    seen: list[tuple[int, int, str]] = []
    tick = throttled(lambda d, t, label: seen.append((d, t, label)), 1.0, clock=lambda: now[0])
    for step in range(1, 21):  # 20 steps, 0.3 s apart: 6 s in all
        now[0] = 0.3 * step
        tick(step, 20, f"step {step}")
    times = [0.3 * d for d, _, _ in seen]
    assert seen[0] == (1, 20, "step 1") and seen[-1] == (20, 20, "step 20")
    assert all(b - a >= 1.0 - 1e-9 for a, b in zip(times[:-2], times[1:-1], strict=True))  # the interval between
    assert all(label == f"step {d}" and t == 20 for d, t, label in seen)  # each step as it was given
    assert [d for d, _, _ in seen] == [1, 5, 9, 13, 17, 20]  # every 1.2 s (the first step >= 1 s on), the last


def test_a_slow_progress_is_passed_on_unchanged():
    now = [0.0]
    seen: list[int] = []
    tick = throttled(lambda d, t, label: seen.append(d), clock=lambda: now[0])
    for step in range(1, 6):
        now[0] += PROGRESS_INTERVAL
        tick(step, 10, "")
    assert seen == [1, 2, 3, 4, 5]


def test_a_long_run_sends_the_browser_at_most_two_updates_a_second():
    """The default rate (PROGRESS_INTERVAL): a 10-second Run of 1,000 steps reaches the browser at most 2 x 10 + 2
    times (the first and last step always pass); at four a second it was 41 (issue 34: each update is chromium CPU)."""
    now = [0.0]
    seen: list[int] = []
    tick = throttled(lambda d, t, label: seen.append(d), clock=lambda: now[0])
    for step in range(1, 1001):
        now[0] = 0.01 * step
        tick(step, 1000, "")
    assert seen[0] == 1 and seen[-1] == 1000
    assert len(seen) <= 2 * 10 + 2
