"""``python -m capefed.ops.launch`` (``make federated``): the loopback federation of :mod:`capefed.ops.loopback`.

One BLAS thread in this process too (set before numpy is imported): every party runs with one, and the
in-process run of the same rounds printed beside the real one must compute exactly what they compute."""

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

from capefed.ops.loopback import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
