# The public API of dpcore (docs/python-api.md): the one list of the names `import dpcore` offers at the top. Type
# checkers read it as dpcore's stub; dpcore/__init__.py reads its imports at run time and imports each name from its
# module on first use (scientific-python SPEC 1, "lazy loading"), so `import dpcore` stays cheap. To export a name,
# add its line under its heading; the internal names stay importable from their subpackages.
# ruff: noqa: I001

__version__: str

# Errors: every bad input is an InputError with a message that says what is wrong and what is allowed
from .validation import InputError as InputError
from .scenario import ScenarioError as ScenarioError

# A scenario: the sites, their sizes and budgets, validated once (docs/math/setting.md, docs/cli.md)
from .scenario import Scenario as Scenario
from .scenario import Site as Site
from .scenario import scenario_from_dict as scenario_from_dict
from .scenario import load_scenario as load_scenario
from .scenario import equal_sites_scenario as equal_sites_scenario
from .scenario import default_scenario as default_scenario

# Planning and auditing a noise design (docs/math/cape.md, docs/math/audit.md)
from .cape import plan_scenario as plan_scenario
from .cape import Plan as Plan
from .cape import SOLVERS as SOLVERS
from .cape import headline_gain as headline_gain
from .cape import compare_plans as compare_plans
from .cape.explain import explain_design as explain_design
from .cape.guarantee import Guarantee as Guarantee

# Planning a consortium (the planner): its public names go here.

# Running each family in one call, with its guarantee per view (docs/math/capepca.md, capeagn.md, lda.md)
from .pca.front import capepca as capepca
from .agn.front import capeagn as capeagn
from .lda.front import capelda as capelda
from .family import Fit as Fit
# Any family through the one contract: one signature, one result (docs/architecture.md, "The family contract")
from .family.catalog import compare as compare
from .family import Comparison as Comparison

# Loading data: bundled data sets and corpus, arrays and CSV text (docs/data.md)
from .data import BUNDLED as BUNDLED
from .data import load_bundled as load_bundled
from .data import load_bundled_corpus as load_bundled_corpus
from .data import Dataset as Dataset
from .data import dataset_from_array as dataset_from_array
from .data import parse_numeric_csv as parse_numeric_csv
from .data import table_to_dataset as table_to_dataset
from .data import parse_text_corpus as parse_text_corpus
