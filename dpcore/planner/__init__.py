"""The stakeholder's planner (docs/planner.md): from a target on a family's headline metric to the samples per site,
the eps or the number of sites it needs, for CAPE, discrete CAPE (where the family has it) and the conventional
scheme side by side.

* :mod:`.curve` - the utility curve of a data set: the metric against the aggregate noise, measured once, cached;
* :mod:`.knobs` - the questions (solve N_s, eps or S; every site or one) and the scenario at any knob value;
* :mod:`.schemes` - the schemes answered for: every entry of the family's algorithm table with a ``planner``;
* :mod:`.solve` - the inversion: the noise at which a share p of fresh studies meets the target, the knob value that
  gives it, the interval, and the forward answer (the scenario as it stands);
* :mod:`.design` - the noise design answered for (the papers', or certified against the aggregator) and the guarantee
  of every view at an answer;
* :mod:`.plan` - :func:`plan_target`, the answer with its limits and its sentence;
* :mod:`.check` - the check: real runs at the answer and just short of it, with confidence intervals;
* :mod:`.export` - the answer as CSV, JSON, a one-file HTML report and a Python script that reproduces the check.

Sits above :mod:`dpcore.experiments` (it reads the family table there) and below the command line.
"""

from .answer import PlanResult, plan_target, prepare_data
from .check import CheckResult, check_plan
from .curve import CURVE_RUNS, UtilityCurve, clear_cache, measure_curve
from .design import DESIGNS
from .knobs import KNOBS, SHORT_FACTOR, Question, question
from .schemes import lead_scheme, planner_schemes, scheme_words
from .solve import PROBABILITY, Answer

__all__ = [
    "CURVE_RUNS",
    "DESIGNS",
    "KNOBS",
    "PROBABILITY",
    "SHORT_FACTOR",
    "Answer",
    "CheckResult",
    "PlanResult",
    "Question",
    "UtilityCurve",
    "check_plan",
    "clear_cache",
    "lead_scheme",
    "measure_curve",
    "plan_target",
    "planner_schemes",
    "prepare_data",
    "question",
    "scheme_words",
]
