"""POT (Python Optimal Transport), the optional float library attncert starts from and compares with.

POT is a test extra: nothing certified depends on it. It gives float starting points (``ot.emd``'s basis for
the exact transport of :mod:`constructions.transport`) and float comparisons labelled agreement (the
Sinkhorn claims' side notes).
"""

from __future__ import annotations

import os
from typing import Any

#: POT's switches for the array libraries it imports when it loads (ot/backend.py): attncert hands it numpy
#: arrays only, and with the tracr extra's jax present its import took 4 s of CPU instead of 2.
POT_NUMPY_ONLY = ("POT_BACKEND_DISABLE_JAX", "POT_BACKEND_DISABLE_PYTORCH", "POT_BACKEND_DISABLE_CUPY", "POT_BACKEND_DISABLE_TENSORFLOW")


def import_pot() -> Any:
    """POT (ImportError if it is not installed: it is a test extra), on its numpy backend unless the
    process has already chosen otherwise (a switch already set is left as it is)."""
    for key in POT_NUMPY_ONLY:
        os.environ.setdefault(key, "1")
    import ot

    return ot
