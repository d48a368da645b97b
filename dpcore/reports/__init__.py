"""Results that stand on their own (issue 20, item 3): every result of the dashboard and the command line - a capePCA,
capeAGN or capeLDA comparison, the noise design with its audit, a sweep - as JSON and CSV that carry the full
settings, the seed, dpcore's version and the guarantee of every view; a one-file HTML report with the figures and a
plain-language summary derived from the numbers; and a Python script that reproduces the run with dpcore
(docs/reports.md). The planner's own exports are :mod:`dpcore.planner.export`.

Sits beside :mod:`dpcore.planner` (same layer, neither imports the other), above the families and the sweeps.
"""

from .common import NUMBERS_MARK, Report, report_csv, report_html, report_json
from .comparison import comparison_report
from .design import design_report
from .lda import lda_report
from .otd import otd_report
from .pca import pca_report
from .sweep import sweep_report

__all__ = ["NUMBERS_MARK", "Report", "comparison_report", "design_report", "lda_report", "otd_report", "pca_report",
           "report_csv", "report_html", "report_json", "sweep_report"]
