"""The dashboard's pages: file, title, icon and a one-line summary. The navigation (app.py), the home page's tour,
scenario links and the browser test all read this list."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PAGES", "PageInfo"]


@dataclass(frozen=True)
class PageInfo:
    path: str
    title: str
    icon: str
    summary: str


PAGES: list[PageInfo] = [
    PageInfo("pages/home.py", "Home", ":material/home:", "what CAPE is and what each page does"),
    PageInfo("pages/sites.py", "Sites and budgets", ":material/table_edit:",
             "edit the sites, their sizes and privacy budgets; presets, load, save and share a scenario"),
    PageInfo("pages/noise_design.py", "Noise design", ":material/tune:",
             "how much noise the helper, the aggregator and the sites add, why a design is (in)feasible, and the "
             "privacy audit"),
    PageInfo("pages/gain.py", "CAPE gain", ":material/trending_up:",
             "how much CAPE gains over independent noise, every gain beside its definition, and how unequal site "
             "sizes change it"),
    PageInfo("pages/epsilon.py", "What ε means", ":material/person_search:",
             "for one site, how well the best attacker can tell whether a person is in its data: from its own "
             "release, from everything the aggregator sees, from the published result"),
    PageInfo("pages/protocol.py", "Protocol walk-through", ":material/route:",
             "one round of CAPE, capePCA and capeAGN message by message, and what each party can learn"),
    PageInfo("pages/capepca.py", "capePCA", ":material/scatter_plot:",
             "distributed private PCA on MNIST, digits, synthetic or uploaded data against every baseline"),
    PageInfo("pages/capeagn.py", "capeAGN", ":material/deployed_code:",
             "private tensor decomposition of topic models and Gaussian mixtures across sites, large vocabularies"),
    PageInfo("pages/topic_models.py", "Topic models", ":material/topic:",
             "private LDA: paper 004's four configurations, capeLDA across sites, real text with top words"),
    PageInfo("pages/privacy_utility.py", "Privacy-utility", ":material/show_chart:",
             "utility against ε, δ, N_s, S or c: the paper's Figs. 2-5 as presets, or sweeps of your scenario"),
    PageInfo("pages/planner.py", "Planner", ":material/flag:",
             "what do we need? the samples per site, ε or sites that reach a target, CAPE and conventional side by "
             "side, on your scenario and data, with a check"),
    PageInfo("pages/glossary.py", "Glossary", ":material/menu_book:",
             "every term the pages use (τ_c, DP floor, conventional scheme, helper, σ_eff, ...) and every gain"),
]
