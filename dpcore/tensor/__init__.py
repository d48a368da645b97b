"""The tensor toolkit of the method-of-moments families (capeAGN in :mod:`dpcore.agn`, capeLDA and paper 004's
configurations in :mod:`dpcore.lda`; the federated round in :mod:`dpcore.federation`): docs/math/capeagn.md and
docs/math/lda.md.

* :mod:`.multilinear` - third-moment sums and T(A, B, C);
* :mod:`.moments` - what a site holds (:class:`MomentSite`): M2, M3 and the projected M3 of MOG samples and of
  documents (:class:`DocumentCounts`);
* :mod:`.whitening` - W = U D^(-1/2) from the top-K eigenpairs; :class:`WhiteningError`;
* :mod:`.power` - the robust and the noisy tensor power method, recovery of components and weights;
* :mod:`.release` - the two-stage message flow (M2, then the projected M3) with CAPE, independent, AVN or no noise;
  each site's release and the aggregator's combination are :mod:`dpcore.cape.parties`' arithmetic;
* :mod:`.projected_noise` - the published third-moment noise law drawn already projected (exact covariance);
* :mod:`.paths` - the memory estimate and the dense or projected third-moment path;
* :mod:`.online` - the online tensor power method (paper 001, Alg. 2).

Imports the bottom layer, privacy, scenario and cape; no algorithm family.
"""

from .moments import (
    ESTIMATORS,
    DocumentCounts,
    MogSite,
    MomentSite,
    StmSite,
    mog_sites,
    pool_sites,
    stm_site_from_words,
)
from .multilinear import multilinear, symmetrize, third_cross, third_moment
from .online import (
    OnlineOracle,
    mog_oracle,
    online_memory_estimate,
    online_tensor_power_method,
    stm_first_oracle,
    stm_oracle,
    streaming_whitening,
)
from .paths import PATHS, PathChoice, choose_path, memory_estimate
from .power import (
    DEFAULT_ITERATIONS,
    DEFAULT_RESTARTS,
    NoisyTpmBudget,
    PowerResult,
    noisy_tensor_power_method,
    noisy_tpm_budget,
    recover,
    tensor_power_method,
)
from .release import (
    M3_NOISE,
    StageMessages,
    StageNoise,
    cape_stage_noise,
    check_m3_law,
    m3_noise_size,
    m3_noise_tensor,
    release_m2,
    release_m3,
)
from .whitening import Whitening, WhiteningError, whiten

__all__ = [
    "DEFAULT_ITERATIONS",
    "DEFAULT_RESTARTS",
    "ESTIMATORS",
    "M3_NOISE",
    "PATHS",
    "DocumentCounts",
    "MogSite",
    "MomentSite",
    "NoisyTpmBudget",
    "OnlineOracle",
    "PathChoice",
    "PowerResult",
    "StageMessages",
    "StageNoise",
    "StmSite",
    "Whitening",
    "WhiteningError",
    "cape_stage_noise",
    "check_m3_law",
    "choose_path",
    "m3_noise_size",
    "m3_noise_tensor",
    "memory_estimate",
    "mog_oracle",
    "mog_sites",
    "multilinear",
    "noisy_tensor_power_method",
    "noisy_tpm_budget",
    "online_memory_estimate",
    "online_tensor_power_method",
    "pool_sites",
    "recover",
    "release_m2",
    "release_m3",
    "stm_first_oracle",
    "stm_oracle",
    "stm_site_from_words",
    "streaming_whitening",
    "symmetrize",
    "tensor_power_method",
    "third_cross",
    "third_moment",
    "whiten",
]
