"""attncert: an exact-arithmetic proof checker for what transformers can express.

The repository's folders ``exact/``, ``constructions/`` and ``proofs/`` are installed as the
subpackages ``attncert.exact`` (the exact fields and balls), ``attncert.constructions`` (RASP
programs and their graphs) and ``attncert.proofs`` (claims, certificates, the command line);
dependencies point one way, proofs -> constructions -> exact.

The one function at the top, ``attncert.sinkhorn(a, b, M, reg)``, is POT's ``ot.sinkhorn`` with a
certified bound (:mod:`attncert.constructions.sinkhorn.pot`); it loads on first use, so that the
command line starts without FLINT or numpy.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "sinkhorn":
        from attncert.constructions.sinkhorn.pot import sinkhorn

        globals()["sinkhorn"] = sinkhorn
        return sinkhorn
    raise AttributeError(f"module 'attncert' has no attribute {name!r}")
