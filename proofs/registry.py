"""The registry of claims: every provable claim plugs in here, and only here.

The command line (``attncert list``, ``prove``, ``prove-all``) and the verifier
find claims through :func:`load_claims`. A claim module calls :func:`register`
at import time; add the module's name to :data:`CLAIM_MODULES`.

A claim's ``prove(**params)`` builds its construction, evaluates it, computes an
independent reference and returns an *unsealed* certificate document (see
:func:`proofs.certify.certificate`). Its parameters are declared as
:class:`Param` so that the command line can offer them as options.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

#: Modules that define claims. Importing them fills the registry.
CLAIM_MODULES: tuple[str, ...] = (
    "attncert.proofs.lemmas.transpose",
    "attncert.proofs.lemmas.matmul",
    "attncert.proofs.lemmas.softmax",
    "attncert.proofs.lemmas.relu",
    "attncert.proofs.lemmas.maxmin",
    "attncert.proofs.lemmas.inverse3",
    "attncert.proofs.simulator.universal",
    "attncert.proofs.simulator.multihead",
    "attncert.proofs.simulator.encoder",
    "attncert.proofs.simulator.encoder_norm",
    "attncert.proofs.simulator.hierarchy",
    "attncert.proofs.simulator.languages",
    "attncert.proofs.sinkhorn",
    "attncert.proofs.compiled",
    "attncert.proofs.compiled_softmax",
    "attncert.proofs.rasp_program",
    "attncert.proofs.approximation.approx",
    "attncert.proofs.approximation.rates",
    "attncert.proofs.identity.claims",
    "attncert.proofs.identity.hierarchy",
    "attncert.proofs.identity.compiled",
)


@dataclass(frozen=True)
class Param:
    """One parameter of a claim, offered on the command line as ``--name``."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str = ""


@dataclass(frozen=True)
class Claim:
    """A provable statement: what it states, how to prove it, how to check a certificate of it.

    A certificate (already hash-checked) is verified in one of two ways, each
    returning the list of problems found (empty: it holds; malformed content
    raises ParseError):

    * ``check(doc)``: an independent check (:mod:`proofs.checkers`, which never
      imports the constructions) establishes the claim from the recorded data,
      then :func:`proofs.rebuild.rebuilt_differences` proves it again from the
      recorded parameters and compares every field;
    * ``verify(doc)``: the claim's own procedure, for claims whose inputs may come
      from a file (the layout claims), which ends with the same whole-document
      comparison.

    ``build(**sizes)``, where there is one construction, gives it for
    ``attncert graph``.
    """

    name: str
    statement: str
    prove: Callable[..., dict[str, Any]]
    params: tuple[Param, ...] = field(default_factory=tuple)
    verify: Callable[[dict[str, Any]], list[str]] | None = None
    check: Callable[[dict[str, Any]], list[str]] | None = None
    #: ``cost(**params)``: what a run will compute, from the parameters alone (proofs/cost.py).
    cost: Callable[..., Any] | None = None
    build: Callable[..., Any] | None = None
    #: ``rebuild(doc)``: prove again from the recorded parameters, reusing a witness that ``check``
    #: has already re-checked (a search result), so that verifying costs less than proving;
    #: without it the rebuild is ``prove(**params)``.
    rebuild: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: Whether a run interprets RASP-language source, bounded by the interpreter's limits (offered as options too).
    interprets: bool = False

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def estimate(self, params: dict[str, Any]) -> Any:
        """The cost model at these parameters (defaults for the rest); a claim without one costs nothing."""
        from attncert.proofs.cost import Cost

        return self.cost(**{**self.defaults(), **params}) if self.cost else Cost()


_CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.name in _CLAIMS:
        raise ValueError(f"claim {claim.name!r} registered twice")
    _CLAIMS[claim.name] = claim
    return claim


def registered(name: str) -> Claim:
    """A claim registered so far, by name (KeyError if its module has not been imported)."""
    return _CLAIMS[name]


def load_claims() -> dict[str, Claim]:
    for mod in CLAIM_MODULES:
        importlib.import_module(mod)
    return dict(_CLAIMS)
