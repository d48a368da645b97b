"""One round of CAPE, capePCA and capeAGN as messages: who sends what, its shape, its noise (docs/math/cape.md,
docs/math/capepca.md, docs/math/capeagn.md).

Three kinds of party: the trusted noise **helper**, the untrusted **aggregator**, and the **sites**.
A :class:`ProtocolRound` lists the steps of one round; each :class:`Message` names its sender and
receiver, the object it carries, its shape, how many numbers it moves (dense and unique entries of a
symmetric object) and the standard deviation of the noise in it, per entry, from a solved
:class:`~dpcore.cape.NoiseDesign`. :func:`party_views` says what each party can learn, from the audit.

Noise std of a release a_s + e_s + f_s + g_s is sqrt(tau_e,s^2 + tau_f,s^2 + tau_g,s^2); against the
aggregator (who knows f_s) it is sqrt(tau_e,s^2 + tau_g,s^2); the aggregate carries tau_c.
Counts: a symmetric D x D matrix has D(D+1)/2 unique entries, a symmetric D x D x D tensor C(D+2, 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..privacy.calibration import eps_for_sigma
from ..privacy.symmetric import unique_count_matrix, unique_count_tensor
from ..textio import site_label
from ..validation import InputError, check_positive_int, check_rank
from .audit import AUDIT_VIEWS, AuditReport, entry_pair_sigma
from .design import NoiseDesign
from .explain import audit_summary
from .noise_variants import noise_variant

__all__ = [
    "AGGREGATOR",
    "HELPER",
    "SITES",
    "PUBLIC",
    "ROUNDS",
    "Message",
    "PartyView",
    "ProtocolRound",
    "ProtocolStep",
    "SymmetryRow",
    "cape_round",
    "capeagn_round",
    "capepca_round",
    "party_views",
    "symmetry_leak",
]

HELPER = "helper"
SITES = "sites"
"""The sender of e_s in the helper-free variant: the sites themselves, by a secure sum (docs/federated.md)."""
AGGREGATOR = "aggregator"
PUBLIC = "everyone"
ROUNDS = ("CAPE", "capePCA", "capeAGN")
"""The kinds of round a protocol view shows (not an algorithm table: those are the families' ``ALGORITHMS``)."""


@dataclass(frozen=True, kw_only=True)
class Message:
    """One message of a round. ``noise_std`` is the per-entry std of the noise it carries (None: no noise)."""

    step: int
    sender: str
    receiver: str
    content: str
    shape: tuple[int, ...]
    numbers: int  # dense count (D^2 for a D x D matrix)
    unique: int  # unique entries (D(D+1)/2 for a symmetric matrix)
    noise_std: float | None
    channel: str  # "private" (point to point, secret), "to aggregator", "broadcast", "public"
    site: str | None = None

    @property
    def shape_text(self) -> str:
        return " x ".join(str(d) for d in self.shape) if self.shape else "scalar"


@dataclass(frozen=True)
class ProtocolStep:
    number: int
    title: str
    description: str
    messages: tuple[Message, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ProtocolRound:
    """The steps of one round and what it publishes."""

    algorithm: str
    steps: tuple[ProtocolStep, ...]
    output: str
    output_std: float
    notes: tuple[str, ...] = field(default=())

    @property
    def messages(self) -> list[Message]:
        return [m for step in self.steps for m in step.messages]

    @property
    def total_numbers(self) -> int:
        """Numbers moved between parties (dense), not counting what is published to everyone."""
        return sum(m.numbers for m in self.messages if m.channel != "public")

    @property
    def total_unique(self) -> int:
        return sum(m.unique for m in self.messages if m.channel != "public")

    @property
    def conventional_numbers(self) -> int:
        """Numbers the conventional scheme moves for the same round: the releases and broadcasts only (each site
        adds its full noise itself, so no helper or aggregator noise is handed out)."""
        return sum(m.numbers for m in self.messages if m.channel in ("to aggregator", "broadcast"))

    def per_party(self) -> dict[str, dict[str, int]]:
        """Numbers (dense) each party sends and receives; sites are listed by name."""
        out: dict[str, dict[str, int]] = {}
        for m in self.messages:
            if m.channel == "public":
                continue
            out.setdefault(m.sender, {"sent": 0, "received": 0})["sent"] += m.numbers
            out.setdefault(m.receiver, {"sent": 0, "received": 0})["received"] += m.numbers
        return out


def _site_label(name: str) -> str:
    return site_label(name)


def _std(var: float) -> float:
    return math.sqrt(max(float(var), 0.0))


def _require(design: NoiseDesign) -> None:
    if not design.feasible:
        raise InputError(f"the protocol needs a feasible noise design: {design.reason}")


def _check_noise(noise: str) -> str:
    """A name of the noise-variant table (:data:`dpcore.cape.noise_variants.NOISE_VARIANTS`), checked."""
    return noise_variant(noise).name


def _noise_messages(
    design: NoiseDesign, step_e: int, step_f: int, symbol: str, shape: tuple[int, ...], numbers: int, unique: int,
    noise: str = "helper",
) -> tuple[ProtocolStep, ProtocolStep]:
    """The e and f steps. In the helper-free variant (dpcore.cape.helper_free) no helper sends e_s: each site draws
    w_s, the sites learn W = sum_t w_t by a secure sum whose masked shares the aggregator forwards as ciphertext, and
    site s sets mu_s e_s = w_s - c_s W itself; the message carrying e_s is then the sites' set-up."""
    helper_free = not noise_variant(_check_noise(noise)).helper
    e_msgs, f_msgs = [], []
    for i, name in enumerate(design.names):
        e_msgs.append(Message(step=step_e, sender=SITES if helper_free else HELPER, receiver=_site_label(name),
                              content=f"E{symbol}_{name}" if symbol else f"e_{name}", shape=shape, numbers=numbers,
                              unique=unique, noise_std=_std(design.var_e[i]), channel="private", site=name))
        f_msgs.append(Message(step=step_f, sender=AGGREGATOR, receiver=_site_label(name),
                              content=f"F{symbol}_{name}" if symbol else f"f_{name}", shape=shape, numbers=numbers,
                              unique=unique, noise_std=_std(design.var_f[i]), channel="private", site=name))
    e_step = ProtocolStep(
        step_e, "The sites make noise that cancels, without a helper",
        "Each site draws its own w_s; a secure sum (pairwise masks on a fixed-point encoding, forwarded by the "
        "aggregator as ciphertext it cannot read) gives every site W = sum_t w_t, and site s sets "
        "e_s = (w_s - c_s W) / mu_s, so that sum_s mu_s e_s = 0 exactly. No party learns another site's e_s.",
        tuple(e_msgs),
    ) if helper_free else ProtocolStep(
        step_e, "The helper hands out noise that cancels",
        "The trusted helper draws e_1..e_S jointly so that sum_s mu_s e_s = 0 exactly and sends each site its "
        "term over a private channel. Alone each e_s is large noise; together they vanish in the aggregate.",
        tuple(e_msgs),
    )
    f_step = ProtocolStep(
        step_f, "The aggregator hands out noise it will subtract",
        "The aggregator draws an independent f_s for each site and sends it privately. It remembers f_s and "
        "subtracts it later; f_s protects the release against the helper, who knows e_s.",
        tuple(f_msgs),
    )
    return e_step, f_step


def _release_messages(
    design: NoiseDesign, step: int, symbol: str, shape: tuple[int, ...], numbers: int, unique: int,
) -> tuple[Message, ...]:
    msgs = []
    for i, name in enumerate(design.names):
        total = _std(design.var_e[i] + design.var_f[i] + design.var_g[i])
        msgs.append(Message(step=step, sender=_site_label(name), receiver=AGGREGATOR, content=f"{symbol}hat_{name}",
                            shape=shape, numbers=numbers, unique=unique, noise_std=total, channel="to aggregator",
                            site=name))
    return tuple(msgs)


def cape_round(design: NoiseDesign, dim: int = 1, *, noise: str = "helper") -> ProtocolRound:
    """Algorithm 1 / generalized CAPE for a statistic with ``dim`` entries (a mean of D features); ``noise`` is the
    variant producing the zero-sum terms ("helper" or "helper-free")."""
    _require(design)
    dim = check_positive_int(dim, "D")
    shape = (dim,) if dim > 1 else ()
    e_step, f_step = _noise_messages(design, 1, 2, "", shape, dim, dim, noise)
    local = ProtocolStep(
        3, "Each site computes and adds its own noise",
        "Site s computes its statistic a_s (here a mean with sensitivity Delta_s) and draws g_s ~ N(0, tau_g,s^2). "
        "No message: this happens inside the site.",
    )
    release = ProtocolStep(
        4, "Each site sends one noisy release",
        "Site s sends a_hat_s = a_s + e_s + f_s + g_s. Against the aggregator (who knows f_s) the noise is e_s + g_s, "
        "against the helper (who knows e_s) it is f_s + g_s; both are at least tau_s.",
        _release_messages(design, 4, "a", shape, dim, dim),
    )
    out = ProtocolStep(
        5, "The aggregator combines and publishes",
        "a = sum_s mu_s (a_hat_s - f_s) = sum_s mu_s a_s + sum_s mu_s g_s, because the e_s cancel. "
        f"The published aggregate carries noise std tau_c = {design.output_std:.4g}.",
        (Message(step=5, sender=AGGREGATOR, receiver=PUBLIC, content="a (the aggregate)", shape=shape, numbers=dim,
                 unique=dim, noise_std=design.output_std, channel="public"),),
    )
    return ProtocolRound(algorithm="CAPE", steps=(e_step, f_step, local, release, out),
                         output="the weighted average a", output_std=design.output_std)


def capepca_round(design: NoiseDesign, dim: int, rank: int, *, noise: str = "helper") -> ProtocolRound:
    """Algorithm 2 (capePCA): symmetric D x D noise, releases of A_s = X_s X_s^T / N_s, top-K subspace out;
    ``noise`` as in :func:`cape_round`."""
    _require(design)
    dim = check_positive_int(dim, "D")
    rank = check_rank(rank, dim)
    shape = (dim, dim)
    dense, uniq = dim * dim, unique_count_matrix(dim)
    e_step, f_step = _noise_messages(design, 1, 2, "", shape, dense, uniq, noise)
    e_step = ProtocolStep(e_step.number, e_step.title, e_step.description +
                          " Each E_s is a symmetric D x D matrix: D(D+1)/2 unique entries, mirrored.", e_step.messages)
    local = ProtocolStep(
        3, "Each site forms its second-moment matrix",
        "A_s = (1/N_s) X_s X_s^T (samples with ||x|| <= 1) and a symmetric G_s with std tau_g,s per unique entry. "
        "Every noise term is symmetric: see 'why symmetric' below.",
    )
    release = ProtocolStep(
        4, "Each site sends its noisy matrix",
        "A_hat_s = A_s + E_s + F_s + G_s (symmetric D x D).",
        _release_messages(design, 4, "A", shape, dense, uniq),
    )
    out = ProtocolStep(
        5, "The aggregator averages and takes the top-K eigenvectors",
        "A_hat = sum_s mu_s (A_hat_s - F_s); it publishes V_K, the K leading eigenvectors (D x K). "
        f"A_hat carries noise std tau_c = {design.output_std:.4g} per unique entry, as pooled Analyze Gauss would.",
        (Message(step=5, sender=AGGREGATOR, receiver=PUBLIC, content="V_K (top-K eigenvectors)", shape=(dim, rank),
                 numbers=dim * rank, unique=dim * rank,
                 noise_std=None, channel="public"),),
    )
    s = design.n_sites
    notes = (
        f"capePCA moves about 3 S D^2 = {3 * s * dense:,} numbers (or 3 S D(D+1)/2 = {3 * s * uniq:,} unique "
        f"entries); DPdisPCA sends S D R = {s * dim * rank:,} numbers with R = K = {rank}.",
    )
    return ProtocolRound(algorithm="capePCA", steps=(e_step, f_step, local, release, out),
                         output="the top-K subspace V_K", output_std=design.output_std,
                         notes=notes)


def capeagn_round(  # long: the eight steps of Algorithm 3 in order, read top to bottom
    design_m2: NoiseDesign, design_m3: NoiseDesign, dim: int, rank: int, *, projected: bool = False,
    noise: str = "helper",
) -> ProtocolRound:
    """Algorithm 3 (capeAGN): stage 1 as capePCA on M2 gives the whitening W (D x K); stage 2 releases
    (M3_s + E3_s + F3_s + G3_s)(W, W, W), K x K x K. With ``projected`` the helper and the aggregator send
    noise already projected by W (docs/math/capeagn.md, "Large D: the projected path"), K x K x K instead of
    D x D x D, and the helper receives W too (one D x K message more). ``noise`` as in :func:`cape_round`: without
    a helper the sites project their own zero-sum terms with the W they already receive."""
    _require(design_m2)
    _require(design_m3)
    if design_m2.names != design_m3.names:
        raise InputError("both stages must have the same sites")
    dim = check_positive_int(dim, "D")
    rank = check_rank(rank, dim)
    m_shape, m_dense, m_uniq = (dim, dim), dim * dim, unique_count_matrix(dim)
    helper = noise_variant(_check_noise(noise)).helper
    e1, f1 = _noise_messages(design_m2, 1, 2, "2", m_shape, m_dense, m_uniq, noise)
    stage1 = ProtocolStep(
        3, "Stage 1: each site sends its noisy M2",
        "M2_hat_s = M2_s + E2_s + F2_s + G2_s (symmetric D x D), with the stage-1 budget.",
        _release_messages(design_m2, 3, "M2", m_shape, m_dense, m_uniq),
    )
    w_msgs = tuple(
        Message(step=4, sender=AGGREGATOR, receiver=_site_label(name), content="W (whitening)", shape=(dim, rank),
                numbers=dim * rank, unique=dim * rank, noise_std=None,
                channel="broadcast", site=name)
        for name in design_m2.names
    )
    whiten_text = ("M2_hat = sum_s mu_s (M2_hat_s - F2_s); top-K eigenpairs (U, D); W = U D^(-1/2) is sent to every "
                   "site. If a top-K eigenvalue is <= 0 the whitening is undefined and the round stops with that "
                   "message. W is private by post-processing of stage 1.")
    if projected and helper:
        # The helper projects its E3_s on W, so it needs W too; W is the (eps1, delta1)-DP output of stage 1, so
        # the helper learns nothing from it that the sites do not.
        w_msgs += (Message(step=4, sender=AGGREGATOR, receiver=HELPER, content="W (whitening)", shape=(dim, rank),
                           numbers=dim * rank, unique=dim * rank, noise_std=None, channel="private"),)
        whiten_text += (" On the projected path the helper gets W as well: it draws its E3_s already projected on W. "
                        "W is a differentially private output of stage 1, so the helper learns nothing from it that "
                        "the sites do not.")
    whiten = ProtocolStep(4, "The aggregator whitens and broadcasts W", whiten_text, w_msgs)
    if projected:
        t_shape, t_dense, t_uniq = (rank, rank, rank), rank**3, unique_count_tensor(rank)
        what = "already projected by W (K x K x K; same law as projecting D x D x D noise)"
    else:
        t_shape, t_dense, t_uniq = (dim, dim, dim), dim**3, unique_count_tensor(dim)
        what = "symmetric D x D x D tensors, C(D+2, 3) unique entries"
    e3, f3 = _noise_messages(design_m3, 5, 6, "3", t_shape, t_dense, t_uniq, noise)
    e3 = ProtocolStep(5, "Stage 2: " + ("the helper hands out" if helper else "the sites make") +
                      " cancelling tensor noise", e3.description + f" Here: {what}.", e3.messages)
    f3 = ProtocolStep(6, "Stage 2: the aggregator hands out tensor noise", f3.description + f" Here: {what}.",
                      f3.messages)
    k_shape, k_dense, k_uniq = (rank, rank, rank), rank**3, unique_count_tensor(rank)
    title = "Stage 2: each site sends its whitened noisy M3"
    sent = "M3_tilde_s = (M3_s + E3_s + F3_s + G3_s)(W, W, W), a K x K x K tensor, with the stage-2 budget."
    if noise_variant(noise).integer:  # integers on a ring: the dense tensor's unique entries; the aggregator projects
        k_shape, k_dense, k_uniq = t_shape, t_dense, t_uniq
        title = "Stage 2: each site sends its noisy M3"
        sent = ("M3_tilde_s = M3_s + E3_s + F3_s + G3_s on the integers (unique entries of the dense D x D x D "
                "tensor, docs/math/discrete.md), with the stage-2 budget; the aggregator projects the decoded sum "
                "on W.")
    stage2 = ProtocolStep(7, title, sent,
                          _release_messages(design_m3, 7, "M3~", k_shape, k_dense, k_uniq))
    out = ProtocolStep(
        8, "The aggregator decomposes and publishes",
        "M3_tilde = sum_s mu_s (M3_tilde_s - F3_s(W, W, W)); the robust tensor power method gives (lambda_k, u_k); "
        "a_k = lambda_k (W^T)^+ u_k and w_k = 1 / lambda_k^2 are published.",
        (Message(step=8, sender=AGGREGATOR, receiver=PUBLIC, content="components a_k and weights w_k",
                 shape=(dim, rank), numbers=dim * rank + rank,
                 unique=dim * rank + rank, noise_std=None, channel="public"),),
    )
    notes = (
        "Privacy: each site's M2 release is calibrated to (eps1, delta1) and its M3 release to (eps2, delta2); the "
        "aggregator sees every release of every site, so what it learns is the audit's, composed over both stages "
        "(the guarantees of a run), not a matter of post-processing (docs/math/corrections.md, item 3).",
    )
    return ProtocolRound(algorithm="capeAGN", steps=(e1, f1, stage1, whiten, e3, f3, stage2, out),
                         output="the components a_k, w_k",
                         output_std=design_m3.output_std, notes=notes)


@dataclass(frozen=True, kw_only=True)
class PartyView:
    """What one party can learn about a site's data, from the audit."""

    party: str
    sees: str
    knows: str
    worst_site: str | None
    sigma_ratio: float | None  # sigma_eff / tau_s for the worst site (>= 1 means at least the site's budget)
    eps_eff: float | None
    eps: float | None
    failing: int


def party_views(design: NoiseDesign, report: AuditReport) -> list[PartyView]:
    """The helper's view (f + g against tau_s, no audit needed) and every audited view, worst site first."""
    _require(design)
    ratio_h = np.sqrt(design.var_f + design.var_g) / design.tau
    worst = int(np.argmin(ratio_h))
    views = [PartyView(party=HELPER, sees="nothing, unless a site's release leaks to it", knows="every e_s it drew",
                       worst_site=design.names[worst], sigma_ratio=float(ratio_h[worst]), eps_eff=None, eps=None,
                       failing=int(np.sum(ratio_h < 1 - 1e-9)))]
    for summary in audit_summary(report, design.tau, design.names):
        view = AUDIT_VIEWS[summary.view]
        party, sees, knows = view.party, view.sees, view.knows
        if summary.view in ("aggregator+coalition", "sites"):
            party = f"{party} (up to {report.collusion})"
        views.append(PartyView(party=party, sees=sees, knows=knows, worst_site=summary.worst_site,
                               sigma_ratio=summary.sigma_ratio, eps_eff=summary.eps_eff,
                               eps=summary.eps, failing=summary.failing))
    return views


@dataclass(frozen=True, kw_only=True)
class SymmetryRow:
    """One site's off-diagonal pair seen by the aggregator, with symmetric E and with i.i.d. E
    (docs/math/corrections.md, item 1)."""

    site: str
    tau: float
    sigma_symmetric: float
    sigma_iid: float
    eps: float
    eps_symmetric: float
    eps_iid: float


def symmetry_leak(design: NoiseDesign, sensitivities: Any, eps: Any, delta: Any) -> list[SymmetryRow]:
    """sigma_eff of an entry pair (i, j), (j, i) of A_hat_s - F_s: sqrt(tau_e^2 + tau_g^2) with symmetric E,
    sqrt(tau_g^2 + tau_e^2 / 2) < tau_s with E drawn independently in both triangles, and the eps each gives."""
    _require(design)
    n = design.n_sites
    sens = np.broadcast_to(np.asarray(sensitivities, dtype=float), (n,))
    eps = np.broadcast_to(np.asarray(eps, dtype=float), (n,))
    delta = np.broadcast_to(np.asarray(delta, dtype=float), (n,))
    rows = []
    for i, name in enumerate(design.names):
        sym = entry_pair_sigma(float(design.var_e[i]), float(design.var_g[i]), symmetric_e=True)
        iid = entry_pair_sigma(float(design.var_e[i]), float(design.var_g[i]), symmetric_e=False)
        rows.append(SymmetryRow(site=name, tau=float(design.tau[i]), sigma_symmetric=sym, sigma_iid=iid,
                                eps=float(eps[i]),
                                eps_symmetric=eps_for_sigma(sym, float(sens[i]), float(delta[i])),
                                eps_iid=eps_for_sigma(iid, float(sens[i]), float(delta[i]))))
    return rows

