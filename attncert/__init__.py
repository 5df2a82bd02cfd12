"""attncert: an exact-arithmetic proof checker for what transformers can express.

The repository's folders ``exact/``, ``constructions/`` and ``proofs/`` are installed as the
subpackages ``attncert.exact`` (the exact fields and balls), ``attncert.constructions`` (RASP
programs and their graphs) and ``attncert.proofs`` (claims, certificates, the command line);
dependencies point one way, proofs -> constructions -> exact.

Functions at the top load on first use, so that the command line starts without FLINT or numpy:
``attncert.sinkhorn(a, b, M, reg)`` and ``attncert.sinkhorn2``, POT's ``ot.sinkhorn`` and ``ot.sinkhorn2`` with certified
bounds (:mod:`attncert.constructions.sinkhorn.pot`); ``attncert.emd(a, b, M)``, ``attncert.emd2(a, b, M)`` and
``attncert.certify_plan(a, b, M, G)``, POT's exact transport with an optimality certificate, and the exact
verdict on a given plan (:mod:`attncert.constructions.transport.pot`, docs/transport.md); and ``attncert.certify_tracr(program, model)``, the
``tracr_model`` certificate of a tracr program and the model tracr compiled from it
(:mod:`attncert.proofs.tracr.model`, docs/tracr.md).
"""

import importlib
from typing import Any

#: The subpackages, imported on first use as the functions are.
_SUBPACKAGES = ("exact", "constructions", "proofs")
#: What ``from attncert import *`` gives and ``dir(attncert)`` lists (IPython's Tab completes from it): the
#: subpackages and the functions that load on first use, which are not in the module's namespace until then.
__all__ = [*_SUBPACKAGES, "sinkhorn", "sinkhorn2", "emd", "emd2", "certify_plan", "certify_tracr"]


def __dir__() -> list[str]:
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"attncert.{name}")
    if name in ("sinkhorn", "sinkhorn2"):
        from attncert.constructions.sinkhorn import pot as sinkhorn_pot

        globals()[name] = getattr(sinkhorn_pot, name)
        return globals()[name]
    if name in ("emd", "emd2", "certify_plan"):
        from attncert.constructions.transport import pot

        globals()[name] = getattr(pot, name)
        return globals()[name]
    if name == "certify_tracr":  # the tracr_model certificate of a tracr program and its compiled model (docs/tracr.md)
        from attncert.proofs.tracr.model import certify_tracr

        globals()["certify_tracr"] = certify_tracr
        return certify_tracr
    raise AttributeError(f"module 'attncert' has no attribute {name!r}")
