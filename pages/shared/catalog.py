"""The dashboard's pages: file, title, icon and a one-line summary (:data:`PAGES`), and the five-minute lesson through
them (:data:`LESSON`). The navigation (app.py), the home page's tour and lesson, scenario links and the browser test
read these lists; tests/test_readme.py checks that README.md's lesson has the same steps, in the same order, naming
the same pages."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LESSON", "PAGES", "LessonStep", "PageInfo", "page_title"]


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
    PageInfo("pages/families.py", "Any family", ":material/category:",
             "any algorithm family through one contract: its data, its algorithms, every metric and every view's "
             "guarantee, with downloads"),
    PageInfo("pages/glossary.py", "Glossary", ":material/menu_book:",
             "every term the pages use (τ_c, DP floor, conventional scheme, helper, σ_eff, ...) and every gain"),
]


def page_title(path: str) -> str:
    """The title of the page at ``path`` (a path of :data:`PAGES`)."""
    return next(p.title for p in PAGES if p.path == path)


@dataclass(frozen=True)
class LessonStep:
    """One step of the five-minute lesson: its title (README.md's bold step heading, without the number), the pages it
    visits (paths of :data:`PAGES`, each named in README.md's step as *Title*) and what Home says about it."""

    title: str
    pages: tuple[str, ...]
    text: str


LESSON: list[LessonStep] = [
    LessonStep("The default: five hospitals, CAPE wins", ("pages/home.py", "pages/gain.py"),
               "the headline says what correlated noise buys for the scenario, in the same words on every page that "
               "shows it; every other gain has its own name and sits beside its definition on CAPE gain."),
    LessonStep("One click to where CAPE wins most, one more to where it stops helping",
               ("pages/home.py", "pages/sites.py"),
               "the buttons above load equal sites and a strict site; the panel says what the edit did, Undo goes "
               "back. On Sites and budgets, give one site ε = 0.1 by hand and watch the same panel."),
    LessonStep("The same in the noise design", ("pages/noise_design.py",),
               "who adds how much noise (the helper's e, the aggregator's f, each site's g), which site sets the DP "
               "floor, and τ_c against the conventional level."),
    LessonStep("What ε means, and a promise that breaks", ("pages/epsilon.py", "pages/home.py"),
               "how well the best attacker can tell whether a person is in one site's data: from the site's own "
               "release, from everything the aggregator sees, from the published result; the third button above "
               "shows the aggregator getting more than promised."),
    LessonStep("Inside real algorithms", ("pages/capepca.py", "pages/capeagn.py"),
               "the same noise inside private PCA and tensor decomposition, against every baseline; each page shows "
               "where CAPE stops helping, and why."),
    LessonStep("Private topic models", ("pages/topic_models.py",),
               "private LDA across sites: how far each method's topics are from the true ones as ε grows, paper 004's "
               "configurations, real text with its top words."),
    LessonStep("The paper's figures at full size", ("pages/privacy_utility.py",),
               "Figs. 2-5 from stored full-size results, any of them run again live, or sweeps of your scenario; "
               "where the curves meet, and why."),
    LessonStep("What do we need? (the stakeholder's question)", ("pages/planner.py",),
               "the samples per site, ε or number of sites that reach a target, CAPE and the conventional scheme side "
               "by side, with a check at the answer and downloads that reproduce it."),
]
