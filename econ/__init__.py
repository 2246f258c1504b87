"""econ: LLM serving and training economics from public prices, hardware and architectures."""

import os

__version__ = "0.1.0"

# econ's matrices are small (the calibration's Jacobian is ~3,400 x 56): one BLAS thread does them as fast as two on
# an idle machine, and on a busy one (a test run, a compile beside it) OpenBLAS's threads spin against the other work
# and made the calibration 4-8x slower (2.0 s against 8.6-17.9 s, 2 cores at load 6). Set before NumPy loads, and
# only where the user has not chosen.
for _name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
