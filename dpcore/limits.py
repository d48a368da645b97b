"""Every limit on the size of an input or a computation, in one place.

Each limit is checked at the boundary, before the allocation or loop it bounds, with a message that names the
limit and says what to change. Later work adds its limits here too (one constant, one line saying what it
bounds and why that value).
"""

from __future__ import annotations

# --- sites and scenarios ---------------------------------------------------------------------------------------
MAX_SITES = 100
"""Sites in one scenario (file, link, table, CLI ``--sites``)."""
MAX_SCENARIO_FILE_BYTES = 1_000_000
"""Largest uploaded scenario JSON file."""
MAX_QUERY_CHARS = 50_000
"""Longest ``?scenario=`` link value."""
MAX_LINK_JSON_CHARS = 2_000_000
"""Largest JSON text a scenario link may decompress to (no decompression bombs)."""

# --- uploads ---------------------------------------------------------------------------------------------------
MAX_UPLOAD_BYTES = 64 * 1024 * 1024
"""Largest accepted numeric CSV (after decompression) or OTD data file, in bytes."""
MAX_UPLOAD_CELLS = 5_000_000
"""Largest accepted number of CSV cells (rows x columns, label column included)."""
MAX_TEXT_BYTES = 32 * 1024 * 1024
"""Largest uploaded text corpus or vocabulary file."""
MAX_DOCUMENTS = 500_000
"""Documents in one uploaded corpus."""
MAX_VOCABULARY = 20_000
"""Words in a vocabulary (the STM dimension D of uploads)."""

# --- PCA -------------------------------------------------------------------------------------------------------
MAX_PCA_ENTRIES = 8_000_000
"""Largest S x D(D+1)/2 (numbers in one noise term across sites): about 64 MB per array."""

# --- tensors ---------------------------------------------------------------------------------------------------
MAX_DENSE_ENTRIES = 64_000_000
"""Largest dense symmetric array (D^2 or D^3 entries): 512 MB of float64; larger tensors take the projected path."""
DEFAULT_MEMORY_BUDGET = 1 << 30
"""Default memory budget (bytes) for the arrays of one OTD run; decides the dense or projected path."""
MAX_RUNS = 1000
"""Runs of one OTD comparison."""
EIGH_MAX_DIM = 800
"""Above this D the OTD whitening takes its top-K eigenpairs from Lanczos (eigsh) instead of a full eigh."""

# --- federated rounds (dpcore.federation, federated/) ----------------------------------------------------------
MAX_FEDERATED_MATRIX_DIM = 2000
"""Largest D of a federated matrix stage (capePCA's A, capeAGN's M2): D(D+1)/2 = 2,001,000 numbers (16 MB) per
message."""
MAX_FEDERATED_TENSOR_DIM = 60
"""Largest D of a federated dense third-moment stage (capeAGN's M3): D^3 = 216,000 noise draws per site,
C(D+2, 3) = 39,711 unique entries per noise message."""
MAX_MESSAGE_LOG_BYTES = 4_000_000
"""Largest message log of a federated run read back (``federated-run/message-log.json``; a run of both rounds
writes about 60 KB)."""
MAX_MESSAGE_LOG_ROUNDS = 16
"""Rounds in one message log."""
MAX_MESSAGE_LOG_ENTRIES = 20_000
"""Messages in one message log, all rounds together (a 3-site run of both rounds logs about 60)."""
MAX_MESSAGE_LOG_DEPTH = 8
"""Nesting depth of the JSON of a message log (the format itself needs 6)."""

# --- audit -----------------------------------------------------------------------------------------------------
MAX_COALITIONS = 3000
"""Designs without a factored helper law (dpcore.cape.audit's general path): exact enumeration of the worst
coalition up to this many coalitions per site (each costs an eigendecomposition)."""
MAX_GREEDY_SITES = 30
"""General path: greedy coalition search up to this many sites; one heuristic coalition beyond."""
MAX_SWEEP_SITES = MAX_SITES
"""Weighted sites of one coalition audit (dpcore.cape.coalition): the sweep has at most S(S-1) candidate
coalitions per site, about 10,000 at 100 sites."""
MAX_SWEEP_ENTRIES = 1 << 20
"""Candidates x sites held at once while sweeping (each a few float64 arrays of this size: about 40 MB)."""
MAX_HELPER_SCALES = 40
"""Helper-noise scales 16, 64, 256, ... tried by the collusion-robust calibration (it stops at its max_e_scale,
1e8 by default: 13 scales; 40 reach 1e25)."""
MAX_ENUMERATED_COALITIONS = 200_000
"""Coalitions enumerated (closed form, about 1 microsecond each) for a site whose sweep and Lagrangian bound
disagree; beyond it the audit reports the bound."""

# --- gain explorer ---------------------------------------------------------------------------------------------
MAX_DRAWS = 5_000
"""Dirichlet size vectors per concentration in the gain explorer."""

# --- sweeps ----------------------------------------------------------------------------------------------------
MAX_SWEEP_RUNS = 200
"""Runs R of one sweep."""
MAX_GRID_POINTS = 25
"""Values on one sweep grid."""
MAX_SITE_NUMBERS = 60_000_000
"""Largest S x max N_s x D of a PCA sweep's site data (8 bytes each: 480 MB)."""
MAX_OTD_SAMPLES = 5_000_000
"""Largest S x max N_s of an OTD sweep (samples drawn per run)."""
