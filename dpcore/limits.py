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

# --- topic models (LDA) ----------------------------------------------------------------------------------------
MAX_DENSE_M3_DIM = 60
"""Largest vocabulary D for which the dense LDA third moment (D^3 entries: 216,000 at D = 60) is formed; larger D
take the projected path M3(W, W, W). The dense tensor exists for tests and tiny vocabularies."""
MAX_LDA_DOCUMENTS = 1_000_000
"""Documents of one synthetic LDA corpus (all sites together; command line --docs, the page)."""
MAX_LDA_VOCABULARY = 5_000
"""Vocabulary size D of a synthetic LDA corpus (its D x D second moment: 200 MB at D = 5,000)."""
MAX_LDA_TOPICS = 50
"""Topics K (the K x K x K whitened tensor and K power-method components per run)."""
MAX_LDA_ALPHA0 = 1_000.0
"""Dirichlet concentration alpha_0 of the LDA prior (beyond it every document mixes all topics evenly)."""
MAX_LDA_DOC_LENGTH = 10_000
"""Words per synthetic document."""
MAX_LDA_WORDS = 50_000_000
"""Documents x words per document of one synthetic corpus (its sampling time and the counts' memory)."""

# --- federated rounds (dpcore.federation, federated/) ----------------------------------------------------------
MAX_FEDERATED_MATRIX_DIM = 2000
"""Largest D of a federated matrix stage (capePCA's A, capeAGN's M2): D(D+1)/2 = 2,001,000 numbers (16 MB) per
message."""
MAX_FEDERATED_TENSOR_DIM = 60
"""Largest D of a federated dense third-moment stage (capeAGN's M3): D^3 = 216,000 noise draws per site,
C(D+2, 3) = 39,711 unique entries per noise message."""

# --- audit -----------------------------------------------------------------------------------------------------
MAX_COALITIONS = 3000
"""Exact enumeration of the worst coalition up to this many coalitions per site."""
MAX_GREEDY_SITES = 30
"""Greedy coalition search up to this many sites; one heuristic coalition beyond."""

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
