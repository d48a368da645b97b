"""The front door (docs/python-api.md): a small public API at the top of dpcore, imported lazily; the page's examples
run and print what it shows; each family's one-call function is run 0 of its comparison; arrays and the one-call
arguments are checked at the boundary."""

from __future__ import annotations

import importlib.util
import inspect
import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT

import dpcore
from dpcore.data import Corpus
from dpcore.seeding import UPLOAD_SPLIT_STREAM, stream_rng
from dpcore.validation import InputError

DOC = ROOT / "docs" / "python-api.md"


def _tool():
    spec = importlib.util.spec_from_file_location("python_api_doc", ROOT / "tools" / "python_api_doc.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def test_the_python_api_page_runs_in_order_and_prints_what_it_shows():
    tool = _tool()
    results = tool.run(DOC.read_text(encoding="utf-8"))
    assert len(results) >= 10 and all(example.expected is not None for example, _ in results)
    assert tool.first_difference(results) is None, tool.first_difference(results)


def test_the_readme_python_example_runs():
    tool = _tool()
    results = tool.run((ROOT / "README.md").read_text(encoding="utf-8"), "README.md")
    assert len(results) == 1 and results[0][1].startswith("capePCA: captured_energy")


def test_the_page_tool_finds_a_changed_output():
    tool = _tool()
    text = "```python\nprint(1 + 1)\n```\n\n```text\n3\n```\n"
    results = tool.run(text)
    assert "printed:\n2\n" in tool.first_difference(results)
    assert tool.filled(text, results) == text.replace("3\n", "2\n")


def test_the_public_api_is_small_documented_and_importable():
    names = [n for n in dpcore.__all__ if n != "__version__"]
    assert 20 <= len(names) <= 60 and len(set(names)) == len(names)
    page = DOC.read_text(encoding="utf-8")
    for name in names:
        value = getattr(dpcore, name)
        assert f"`{name}`" in page, f"{name} is not on docs/python-api.md"
        module = sys.modules[dpcore._PUBLIC[name]]
        own = inspect.getdoc(value) if callable(value) else None
        assert "docs/" in (own or "") or "docs/" in (module.__doc__ or ""), f"{name} cites no page of docs/"
        if inspect.isfunction(value):
            hints = inspect.signature(value)
            assert hints.return_annotation is not inspect.Signature.empty, name
    assert dpcore.pca.__name__ == "dpcore.pca" and dpcore.lda.compare_lda is not None
    from dpcore.pca.compare import compare_pca  # internal names stay importable from their subpackages

    assert compare_pca is dpcore.pca.compare_pca
    with pytest.raises(AttributeError, match="no attribute 'capePCA'"):
        dpcore.capePCA  # noqa: B018
    assert {"capepca", "pca", "Scenario"} <= set(dir(dpcore))


def test_dir_of_dpcore_is_the_public_api_and_the_subpackages_only():
    """Issue 33: ``dir(dpcore)`` lists the stub's names, ``__version__`` and the subpackages - no module the package
    file imports (``os``), no helper of it, and nothing that importing a subpackage added to its namespace."""
    import dpcore.cape.audit  # noqa: F401 - puts dpcore.cape into the package's namespace
    import dpcore.pca  # noqa: F401

    shown = set(dir(dpcore))
    packages = {p.name for p in (ROOT / "dpcore").iterdir() if (p / "__init__.py").is_file()} - {"otd"}
    assert shown == set(dpcore.__all__) | packages
    assert "otd" not in shown and "agn" in shown  # the deprecated alias of dpcore.agn imports, but is not listed
    assert not {"os", "_os", "_public_names", "_PUBLIC", "__getattr__"} & shown
    assert {"cape", "pca", "capepca", "InputError", "__version__"} <= shown


def test_import_dpcore_imports_nothing_else_of_dpcore_and_ships_its_type_hints():
    done = subprocess.run([sys.executable, "-c", "import sys, dpcore; "
                           "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dpcore', 'numpy')))"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0 and done.stdout.split() == ["['dpcore']"], done.stdout + done.stderr
    assert (ROOT / "dpcore" / "py.typed").is_file() and (ROOT / "dpcore" / "__init__.pyi").is_file()


def _digits_like(rng, n=900, dim=12):
    basis = np.linalg.qr(rng.standard_normal((dim, dim)))[0]
    return (rng.standard_normal((n, dim)) * np.linspace(3.0, 0.2, dim)) @ basis.T


def test_capepca_is_run_zero_of_the_comparison(rng):
    x = _digits_like(rng)
    fit = dpcore.capepca(x, k=3, eps=1.0, delta=1e-5, sites=3, seed=4)
    scenario = dpcore.equal_sites_scenario(3, 300, 1.0, 1e-5, calibration="analytic")
    setup = dpcore.pca.prepare_pca(dpcore.dataset_from_array(x), scenario, 3, seed=4)
    reference = dpcore.pca.compare_pca(setup.problem, setup.privacy, ["cape"], runs=2, seed=4, workers=1)
    first = reference.results["cape"][0]
    np.testing.assert_array_equal(fit.components, first.subspace.T)
    assert fit.metrics == first.metrics and fit.algorithm == "cape" and fit.title == "capePCA"
    views = {g.view for g in fit.guarantees}
    assert {"release", "aggregator"} <= views and fit.certified == all(g.certified for g in fit.guarantees)
    assert fit.scenario == scenario and "captured_energy_ratio" in fit.summary()


def test_capeagn_is_run_zero_of_the_comparison_on_the_same_upload(rng):
    centres = 2.0 * np.eye(4)[:3]
    x = np.concatenate([c + 0.3 * rng.standard_normal((600, 4)) for c in centres])
    fit = dpcore.capeagn(x, k=3, eps=2.0, delta=1e-5, sites=3, sigma2=0.09, norm_bound=3.5, seed=2)
    scenario = dpcore.equal_sites_scenario(3, 600, 2.0, 1e-5, calibration="analytic")
    problem = dpcore.agn.upload_problem(x, 3, scenario, 2, sigma2=0.09, norm_bound=3.5)
    reference = dpcore.agn.compare_algorithms(scenario, ["cape"], problem=problem, runs=2, seed=2, workers=1)
    assert fit.metrics == reference.records[0].metrics and reference.records[0].run == 0
    np.testing.assert_array_equal(fit.components, reference.examples["cape"].components)
    assert fit.components.shape == (3, 4) and fit.metrics["q_comp"] < 0.5  # close to the non-private centres


def test_capelda_is_run_zero_of_the_comparison_and_says_why_a_run_has_no_topics():
    corpus = dpcore.load_bundled_corpus()
    fit = dpcore.capelda(corpus, k=4, eps=5000.0, delta=1e-6, sites=2, seed=1)
    assert isinstance(corpus, Corpus) and fit.components.shape == (4, corpus.dim)
    np.testing.assert_allclose(fit.components.sum(axis=1), 1.0)
    scenario = dpcore.equal_sites_scenario(2, corpus.n // 2, 5000.0, 1e-6, calibration="analytic")
    problem = dpcore.lda.corpus_lda_problem(corpus, 4, 1.0, scenario.sizes / scenario.total_n,
                                            stream_rng(1, UPLOAD_SPLIT_STREAM))
    reference = dpcore.lda.compare_lda(scenario, ["cape"], problem=problem, runs=1, seed=1, workers=1)
    assert fit.metrics == reference.records[0].metrics
    with pytest.raises(InputError, match="configuration 3 gave no topics in this run .unusable.: configuration 3 is "
                       "unusable on this corpus"):
        dpcore.capelda(corpus, k=4, eps=30.0, delta=1e-6, sites=2, algorithm="3")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"eps": 1.0, "delta": 1e-5}, "give sites"),
    ({"sites": 3, "eps": 1.0, "delta": 1e-5, "scenario": dpcore.default_scenario()}, "not both"),
    ({"sites": 0, "eps": 1.0, "delta": 1e-5}, "sites"),
    ({"sites": 3, "eps": -1.0, "delta": 1e-5}, "capepca: eps must be a number from 1e-06 to 10000"),
    ({"sites": 3, "eps": 1.0, "delta": 1e-5, "algorithm": "magic"}, "magic"),
    ({"sites": 3, "eps": 1.0, "delta": 1e-5, "seed": -1}, "capepca: seed must be an integer from 0 to 4,294,967,295"),
    ({"sites": 2000, "eps": 1.0, "delta": 1e-5}, "capepca: sites must be an integer from 1 to 100 .got 2000."),
])
def test_the_one_call_arguments_are_checked_with_a_message(kwargs, message, rng):
    with pytest.raises(InputError, match=message):
        dpcore.capepca(_digits_like(rng, n=900), k=2, **kwargs)


@pytest.mark.parametrize(("values", "message"), [
    (np.ones(5), "2-D array"),
    (np.ones((0, 3)), "2-D array"),
    (np.array([[1.0, np.nan], [0.0, 1.0]]), "NaN or infinite"),
    (np.array([[1e200, 0.0]]), "larger in magnitude"),
    ([["a", "b"]], "must be numeric"),
    (np.zeros((2, 3_000_000)), "at most 5,000,000"),
])
def test_an_array_is_checked_like_an_upload(values, message):
    with pytest.raises(InputError, match=message):
        dpcore.dataset_from_array(values)


def test_an_array_becomes_a_dataset_with_one_sample_per_column():
    data = dpcore.dataset_from_array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], labels=["a", "b"])
    assert (data.dim, data.n_samples) == (3, 2) and list(data.labels) == ["a", "b"]
    np.testing.assert_array_equal(data.x, [[1.0, 4.0], [2.0, 5.0], [3.0, 6.0]])
    with pytest.raises(InputError, match="one entry per row"):
        dpcore.dataset_from_array(np.ones((2, 3)), labels=[1])


def test_the_old_name_dpcore_otd_still_imports_with_a_warning_and_the_same_objects():
    """Issue 33 renamed capeAGN's package dpcore.otd -> dpcore.agn; a script exported before (``from dpcore.otd import
    METRICS, OtdSettings, SyntheticSpec, compare_algorithms``) and ``dpcore.otd.problem`` still import, with a
    DeprecationWarning, as the very objects of dpcore.agn (nothing loaded twice)."""
    code = ("import warnings\nwarnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    import dpcore.otd\nexcept DeprecationWarning as w:\n    print('warned:', w)\n"
            "warnings.simplefilter('ignore', DeprecationWarning)\n"
            "from dpcore.otd import METRICS, OtdSettings, SyntheticSpec, compare_algorithms\n"
            "import dpcore.agn, dpcore.otd.problem, dpcore.agn.problem\n"
            "from dpcore.otd.algorithms.pooled import local_site_index\n"
            "print(OtdSettings is dpcore.agn.OtdSettings, compare_algorithms is dpcore.agn.compare_algorithms,\n"
            "      dpcore.otd.problem is dpcore.agn.problem, METRICS is dpcore.agn.METRICS,\n"
            "      local_site_index is dpcore.agn.algorithms.pooled.local_site_index, callable(dpcore.capeagn))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "warned: dpcore.otd is deprecated" in done.stdout and done.stdout.splitlines()[-1] == " ".join(["True"] * 6)
