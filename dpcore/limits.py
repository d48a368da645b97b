"""Every limit on the size of an input or a computation, and every allowed range of a number, in one place.

Each limit is checked at the boundary, before the allocation or loop it bounds, with a message that names the
limit and says what is allowed. Later work adds its limits here too (one constant, one line saying what it
bounds and why that value). docs/limits.md lists them; ``tests/test_limits_doc.py`` checks that table against
this module, so a new constant needs a row there.

Ranges are ``(low, high)`` tuples, both ends allowed unless the docstring says otherwise.
"""

from __future__ import annotations

# --- sites and scenarios ---------------------------------------------------------------------------------------
MAX_SITES = 100
"""Sites in one scenario (file, link, table, CLI ``--sites``)."""
MAX_SITE_SIZE = 1_000_000_000
"""Samples N_s of one site. 100 sites of this size sum to 1e11, exact in int64 and float64."""
MAX_SITE_NAME_CHARS = 100
"""Characters of a site name."""
EPS_RANGE = (1e-6, 1e4)
"""eps of a site (and of every command-line or grid eps): both calibrations and their exact inverse hold to
1e-6 relative over this range (tests/test_limits.py)."""
DELTA_RANGE = (1e-100, 1.0)
"""delta of a site, the upper end excluded: the analytic calibration loses its bracket below 1e-280."""
TAU_C_RANGE = (1e-20, 1e20)
"""tau_c of a scenario (an absolute noise std): its square stays a normal float64."""
TAU_C_FLOOR_RATIO = (1e-6, 1e6)
"""tau_c divided by the DP floor of the statistic being designed: the design's linear program is exact over
this range (tests/test_limits.py)."""
MAX_SEED = 2**32 - 1
"""Seeds are integers 0..MAX_SEED (scenario, command line, pages); the dashboard's number inputs hold at most
2^53 - 1."""
E_SCALE_RANGE = (1.0, 1e6)
"""Multiplier of the helper's noise variance (general solver)."""
MAX_SIGMA2 = 1e6
"""Largest MOG component variance sigma^2 (sensitivities, synthetic models, uploads)."""
NORM_BOUND_RANGE = (1e-100, 1e100)
"""Public norm bound zeta of MOG samples (command line ``--norm-bound``, a federated round's plan): zeta^2 and
sigma^2 / zeta^2 stay normal float64 numbers (1e-300 squared is 0, 1e200 squared overflows)."""
SPLIT_RANGE = (0.01, 0.99)
"""Share of every site's (eps, delta) spent on the first of two stages (capeAGN, capeLDA: command line ``--split``,
a federated round's plan): each stage keeps at least 1% of the budget, so a stage's delta stays within the analytic
calibration's bracket (a share of 1e-300 sent it searching for ever)."""

# --- scenario files and links ----------------------------------------------------------------------------------
MAX_SCENARIO_FILE_BYTES = 1_000_000
"""Largest uploaded scenario JSON file."""
MAX_QUERY_CHARS = 50_000
"""Longest ``?scenario=`` link value."""
MAX_SETTINGS_QUERY_CHARS = 4_000
"""Longest ``?settings=`` link value (a page's own widget values)."""
MAX_LINK_JSON_CHARS = 2_000_000
"""Largest JSON text a scenario link may decompress to (no decompression bombs)."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of brackets in a JSON input (a scenario needs 3); checked before parsing, so no recursion."""
MAX_NUMBER_CHARS = 100
"""Longest number literal in a JSON input (no integers of thousands of digits)."""
MAX_JSON_BYTES = 8_000_000
"""Largest JSON text any reader parses unless it names a smaller bound of its own (:func:`dpcore.textio.load_json`:
a scenario file, a link, a ledger, a roster, a message log, a round's settings); checked before the text is
scanned."""

# --- uploads ---------------------------------------------------------------------------------------------------
MB = 1_000_000
"""One megabyte, the unit of every size limit a user sees (10^6 bytes): the browser's file uploader counts
Streamlit's ``server.maxUploadSize`` in these units, and so do the messages (:func:`dpcore.textio.size_text`)."""
MAX_UPLOAD_MB = 64
"""Largest upload in MB: ``server.maxUploadSize`` in ``.streamlit/config.toml`` (tests/test_hostile_surfaces.py
reads it and compares)."""
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * MB
"""Largest accepted numeric CSV (after decompression) or OTD data file, in bytes: exactly what the browser lets
through (``server.maxUploadSize`` = MAX_UPLOAD_MB)."""
MAX_DATA_MAGNITUDE = 1e100
"""Largest magnitude of a value of uploaded data (CSV cells, MOG samples): squares summed over 20,000 features or
5,000,000 samples stay far below the float64 maximum (1.8e308), so norms, covariances and moments never overflow."""
MAX_UPLOAD_CELLS = 5_000_000
"""Largest accepted number of CSV cells (rows x columns, label column included)."""
MAX_UPLOAD_COLUMNS = 20_000
"""Columns of a CSV (features, or words of a count table: MAX_VOCABULARY); counted on the first line before
anything is parsed."""
MAX_TEXT_BYTES = 32 * MB
"""Largest uploaded text corpus or vocabulary file."""
MAX_DOCUMENTS = 500_000
"""Documents in one uploaded corpus."""
MAX_TEXT_LINES = 2 * MAX_DOCUMENTS
"""Lines of an uploaded text corpus (one document per line; a blank line between documents allowed), counted from
its line breaks before any line is split or tokenised: a file of 10 million short lines is refused at once."""
MAX_VOCABULARY_BYTES = 2 * MB
"""Largest vocabulary file (20,000 words of up to 99 letters fit), checked before it is split into words."""
MAX_VOCABULARY = 20_000
"""Words in a vocabulary (the STM dimension D of uploads)."""

# --- files shipped with the project (dpcore/data/files/: data sets, corpora, stored results) --------------------
MAX_SHIPPED_FILE_BYTES = 50 * MB
"""Largest shipped file read back as it is stored (gzip-compressed; the largest, MNIST, has 1.1 MB), and largest
manifest of the stored results: a device or a huge file in its place is refused after this many bytes."""
MAX_SHIPPED_TEXT_BYTES = 200 * MB
"""Largest decompressed shipped file (MNIST: 9.1 MB of CSV): a gzip bomb in its place costs at most this much
memory before it is refused."""

# --- runs ------------------------------------------------------------------------------------------------------
MAX_RUNS = 1000
"""Runs of one comparison (capePCA or capeAGN, command line and pages)."""
MAX_SITE_NUMBERS = 100_000_000
"""Largest number of data values held for the sites at once (8 bytes each: 800 MB; 100 sites of 1,000 MNIST images
fit): S x N_s x D of PCA data or MOG samples, S x N_s x L words of STM documents (comparisons and sweeps)."""
MAX_PLANNER_STUDY_NUMBERS = 40_000_000
"""Largest number of data values (N x D, or N x L words) of one simulated study of the planner: its curve draws a
score of such studies at the answer's size, so an answer needing more is unreachable with that reason, checked before
any draw (capePCA's D = 200: 200,000 samples, drawn a block at a time)."""

# --- PCA -------------------------------------------------------------------------------------------------------
MAX_PCA_ENTRIES = 64_000_000
"""Largest S x D(D+1)/2: the sites' second moments A_s, the one array of that size a PCA comparison keeps (8 bytes
each: 512 MB). A run streams its noise in blocks (dpcore.pca.algorithms.cape.BLOCK_NUMBERS), so its memory beyond
the data is O(D^2) whatever S: S = 100 at D = 784 (30.8 M) or S = 10 at D = 2,000 (20 M) fit."""
MAX_REPLAY_NUMBERS = 24_000_000
"""Largest number of standard normals a PCA sweep records for one (run, algorithm) to replay them at the other grid
points (192 MB; capePCA draws about 3 S D(D+1)/2): above it the sweep draws them again at every grid point, the same
numbers from the same stream."""
MAX_SYNTHETIC_DIM = 3_000
"""D of synthetic PCA data: its covariance's D x D random rotation (a QR decomposition) is drawn first."""
DECAY_RANGE = (1e-3, 100.0)
"""Decay rate of the synthetic spectrum (d^-decay or exp(-decay (d - 1)))."""
CONCENTRATION_RANGE = (1e-3, 1e3)
"""Dirichlet concentration of skewed site sizes: below 1e-3 the draws underflow to NaN."""

# --- tensors ---------------------------------------------------------------------------------------------------
MAX_DENSE_ENTRIES = 64_000_000
"""Largest dense symmetric array (D^2 or D^3 entries): 512 MB of float64; larger tensors take the projected path."""
DEFAULT_MEMORY_BUDGET = 1 << 30
"""Default memory budget (bytes) for the arrays of one OTD run; decides the dense or projected path."""
MEMORY_BUDGET_RANGE = (16 << 20, 64 << 30)
"""Memory budget of one OTD run in bytes (16 MiB to 64 GiB)."""
MAX_OTD_DIM = 20_000
"""Dimension D of a capeAGN problem (features, or vocabulary size = MAX_VOCABULARY)."""
MAX_COMPONENTS = 200
"""Components K of a capeAGN problem (its K^3 tensors)."""
MAX_DOC_LENGTH = 1000
"""Words L of one synthetic STM document."""
MAX_POWER_RESTARTS = 1000
"""Random starts L per component of the tensor power method."""
MAX_POWER_ITERATIONS = 1000
"""Iterations N per start of the tensor power method."""
MAX_POWER_WORK = 1e12
"""Multiply-adds of one tensor power method, estimated from the product of its flags before the loop: in core
K (N L + N) K^3 (K components, L starts of N steps, then N steps of the best start, each a contraction of the
K x K x K tensor); online K (N + 1) n K (w + L) (N + 1 passes over n samples of width w: features, words per
document, or 3 first words). Measured 0.5e9 to 1.8e9 per CPU second on one core of the project's machine (in core
K = 40 and 80, online D = 50 and 200): 1e12 is 10 to 30 CPU minutes, while L = N = 1,000 at K = 200 would be
1.6e15."""
MAX_PUBLISHED_PROJECTED_K = 20
"""Largest K for the published third-moment noise law on the projected path: its exact sampler factors the
C(K+2, 3) x C(K+2, 3) covariance of the projected noise (K = 20: 1,540 x 1,540, about 2 s at D = 10,000)."""
EIGH_MAX_DIM = 800
"""Above this D the OTD whitening takes its top-K eigenpairs from Lanczos (eigsh) instead of a full eigh."""

# --- topic models (LDA) ----------------------------------------------------------------------------------------
MAX_DENSE_M3_DIM = 60
"""Largest vocabulary D for which the dense LDA third moment (D^3 entries: 216,000 at D = 60) is formed; larger D
take the projected path M3(W, W, W). The dense tensor exists for tests and tiny vocabularies."""
MAX_KEPT_M3_DIM = 60
"""Largest D for which a site keeps its dense third moment once computed (read-only; D^3 doubles: 1.7 MB at D = 60,
beside :func:`dpcore.tensor.paths.memory_estimate`'s count): a planner's studies and a curve's runs release the same
site's M3 hundreds of times, each with fresh noise (capeAGN's planner at D = 10 computed one site's 70 times)."""
MAX_KEPT_DISCRETE_DESIGNS = 64
"""Integer designs kept in a process for their inputs (:func:`dpcore.cape.discrete.discrete_design`; a few KB each)."""
MAX_KEPT_NOISE_DESIGNS = 256
"""Noise designs of the general solver kept in a process for their inputs (:func:`dpcore.cape.solvers.general.
solve_general`; a few KB each at the sites' limit)."""
MAX_LDA_DOCUMENTS = 1_000_000
"""Documents of one synthetic LDA corpus (all sites together; command line --docs, the page)."""
MAX_LDA_VOCABULARY = 5_000
"""Vocabulary size D of an LDA corpus, synthetic or text (its D x D second moment: 200 MB at D = 5,000)."""
MAX_LDA_TOPICS = 50
"""Topics K (the K x K x K whitened tensor and K power-method components per run)."""
MAX_LDA_ALPHA0 = 1_000.0
"""Dirichlet concentration alpha_0 of the LDA prior (beyond it every document mixes all topics evenly)."""
MAX_LDA_DOC_LENGTH = 10_000
"""Words per synthetic document."""
MAX_LDA_WORDS = 50_000_000
"""Documents x words per document of one synthetic corpus (its sampling time and the counts' memory)."""
MAX_LDA_TOP_WORDS = 30
"""Most probable words printed per topic (command line ``lda --top-words``)."""

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
MAX_LEDGER_BYTES = 16 * MB
"""Largest privacy-ledger file a site reads (dpcore.federation.ledger)."""
MAX_LEDGER_EVENTS = 20_000
"""Events one site's privacy ledger may hold (its creation, approvals, reservations, spends and settlements; a round
of one algorithm writes at most 4 on the dense path, about 2 KB)."""
MAX_RELEASE_MU = 1_000.0
"""Largest mu = Delta / sigma_eff of one release a ledger records or reads (mu-GDP): such a release alone has an eps
above 500,000 at any delta < 1, beyond every total budget a ledger may hold (EPS_RANGE), so nothing allowed is refused;
MAX_LEDGER_EVENTS releases at this bound compose to mu = 1.5e5, and the composition (math.hypot) never overflows."""
MAX_STUDY_BYTES = 256 * 1024
"""Largest study document (``capefed-study-v1``) a party reads: its settings, sites and descriptions (a study of 3
sites and two algorithms is about 2 KB)."""
MAX_STUDY_ROUNDS = 10_000
"""Most rounds of each algorithm one study may allow."""
LEDGER_LOCK_SECONDS = 60.0
"""Longest wait for another writer's lock on a site's ledger (fcntl.flock on ``<ledger>.lock``; one update holds it
for milliseconds): beyond, the release is refused, naming the lock, instead of waiting for ever."""
MAX_MESSAGE_LOG_DEPTH = 8
"""Nesting depth of the JSON of a message log (the format itself needs 6)."""

# --- federated messages (federated/capefed/app/wire.py: every Flower record a party receives) ----------------------
MAX_WIRE_VALUES = 4096
"""Configuration values in one message (a bundle of 16 rounds' requests with a few dozen fields each fits)."""
MAX_WIRE_LIST = 10_000
"""Items of one list value (a set-up answer carries one sealed message per other site and stage: at most 99 x 2)."""
MAX_WIRE_TEXT = 1_000_000
"""Characters of one text value (a site statement has at most 4,096; the settings at most 4,096)."""
MAX_WIRE_BYTES = 64 * MB
"""Bytes of one byte-string value (a sealed share of the largest matrix stage: 2,001,000 x 8 bytes plus 114)."""
MAX_WIRE_ARRAYS = 256
"""Arrays in one message (a bundle of rounds, a few arrays each)."""
MAX_WIRE_ARRAY_NUMBERS = 4_100_000
"""Numbers in one array, checked from its declared shape before anything is allocated: the largest a round sends is
a matrix stage's D(D+1)/2 = 2,001,000 unique entries at D = MAX_FEDERATED_MATRIX_DIM."""
MAX_WIRE_NUMBERS = 16_000_000
"""Numbers in all arrays of one message together (128 MB of float64)."""
MAX_WIRE_ARRAY_DIMS = 3
"""Dimensions of one array (a K x K x K tensor at most)."""
MAX_NPY_HEADER_BYTES = 4096
"""Bytes of the .npy header of one array (numpy writes about 128)."""

# --- audit -----------------------------------------------------------------------------------------------------
MAX_DROPOUT_SETS = 3000
"""Drop-out sets of size k the what-if examines exactly (:func:`dpcore.cape.helper_free.dropout_whatif`); beyond,
the k sites with the largest weights."""
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

# --- worker processes ------------------------------------------------------------------------------------------
MAX_WORKERS = 8
"""Worker processes for independent runs (comparisons, sweeps): the default is the available CPUs up to this."""
MAX_DRAW_THREADS = 8
"""Threads that draw one large block of the simulation's standard normals (dpcore.normals): the available CPUs up
to this; one in a worker process."""

# --- sweeps ----------------------------------------------------------------------------------------------------
MAX_SWEEP_RUNS = 200
"""Runs R of one sweep."""
MAX_GRID_POINTS = 25
"""Values on one sweep grid."""
MAX_OTD_SAMPLES = 5_000_000
"""Largest S x N_s of capeAGN (samples drawn per run, comparisons and sweeps)."""

# --- discrete noise (docs/math/discrete.md) ---------------------------------------------------------------------
MAX_SAMPLER_SIGMA2 = 2**60
"""Largest sigma^2 of the exact discrete Gaussian sampler: the denominator 2 t m of its acceptance exponent stays
below 2^63 (int64)."""
MAX_RING_BITS = 64
"""Widest ring of a discrete design (integers mod 2^b, uint64 arithmetic); a design needing more is refused."""
