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


#: POT 0.9.7's ``ot.emd`` ends the process with a segmentation fault when the largest mass is below about 1e-161
#: (measured: two masses of 1e-162; ten or a hundred of 1e-163; one mass of 1e-150 beside tiny ones was fine), which
#: `attncert verify` reached through a transport_plan certificate's side notes. Masses whose largest is below
#: TINY_MASS are handed to it scaled up by a power of two (the transport problem is linear in the masses: the plan
#: scales with them, the duals do not), and the plan is scaled back.
TINY_MASS = 2.0**-256


def pot_emd(ot: Any, a: Any, b: Any, M: Any, **options: Any) -> Any:
    """``ot.emd(a, b, M, **options)`` for float64 masses a, b, the masses first scaled to a largest in [1/2, 1) by a
    power of two where their largest is below TINY_MASS (POT crashes on them), and the plan (and a log's cost) scaled
    back: what ``ot.emd`` gives on ordinary masses, unchanged."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    top = max(float(a.max(initial=0.0)), float(b.max(initial=0.0)))
    if not 0.0 < top < TINY_MASS:
        return ot.emd(a, b, M, **options)
    k = -int(np.frexp(top)[1])
    out = ot.emd(np.ldexp(a, k), np.ldexp(b, k), M, **options)
    if isinstance(out, tuple):
        G, log = out
        if "cost" in log:
            log["cost"] = float(np.ldexp(float(log["cost"]), -k))
        return np.ldexp(G, -k), log
    return np.ldexp(out, -k)
