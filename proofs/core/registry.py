"""The registry of claims: every provable claim plugs in here, and only here.

The command line (``attncert list``, ``prove``, ``prove-all``) and the verifier
find claims through :data:`INDEX` and :func:`load_claim`. A claim module calls
:func:`register` at import time; add the claim to :data:`INDEX`.

A claim's ``prove(**params)`` builds its construction, evaluates it, computes an
independent reference and returns an *unsealed* certificate document (see
:func:`proofs.core.certify.certificate`). Its parameters are declared as
:class:`Param` so that the command line can offer them as options.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any, Callable

@dataclass(frozen=True)
class Entry:
    """What the command line knows of a claim before loading it: the module that registers it, a
    one-line summary (``attncert list``; the certificate's statement is the claim's own), and whether
    it has a construction for ``attncert graph``. tests/proofs/core/test_registry.py holds it to the claims."""

    module: str
    summary: str
    graph: bool = True
    #: The optional package the claim needs (an extra of attncert's); prove-all skips the claim without it.
    needs: str | None = None
    #: Whether prove-all proves it; False for a claim whose proof and verification take too long for the main job
    #: (``prove-all --all`` proves it too).
    in_prove_all: bool = True


_L, _S, _P = "attncert.proofs.lemmas.", "attncert.proofs.simulator.", "attncert.proofs."
_SINKHORN, _IDENTITY = "attncert.proofs.sinkhorn", "attncert.proofs.identity."

#: Every claim, in the order prove-all runs them. Loading a claim imports its module only, so that
#: ``attncert list``, ``--help`` and a proof of one claim do not import every construction.
INDEX: dict[str, Entry] = {
    "transpose": Entry(_L + "transpose", "transpose(r, c) maps M to M^T, exactly, on the recorded input"),
    "matmul": Entry(_L + "matmul", "matmul(r, k, c) maps A, B to AB, exactly, on the recorded inputs"),
    "softmax": Entry(_L + "softmax", "softmax_rows(r, c) maps S to softmax(S) row by row, exactly in EE, on the recorded input"),
    "relu": Entry(_L + "relu", "relu(n) maps x to max(x, 0), exactly, on the recorded input"),
    "maxmin": Entry(_L + "maxmin", "maxmin(n) sorts each pair in decreasing order, exactly, on the recorded input"),
    "inverse3": Entry(_L + "inverse3", "inverse3 maps an invertible 3 x 3 matrix to its inverse, exactly, on the recorded input"),
    "universal": Entry(_S + "universal", "U(n, d, d_v) computes softmax(X A X^T) X V, exactly in EE, on the recorded inputs"),
    "multihead": Entry(_S + "multihead", "multihead(n, d, d_v, h, d_o) computes multi-head attention, exactly in EE, on the recorded inputs"),
    "encoder_layer": Entry(_S + "encoder", "encoder_layer(n, d, d_v, h, f) computes an encoder layer, exactly in EE, on the recorded inputs"),
    "encoder_layer_norm": Entry(_S + "encoder_norm", "the encoder layer exactly, then its layer norm in certified balls, on the recorded inputs"),
    "hierarchy": Entry(_S + "hierarchy", "U(N, D, D_v), built once, computes every smaller attention layer exactly, on recorded inputs"),
    "match2": Entry(_S + "languages", "U's exact readout of T_Match2 is Match2 on every word up to the given length"),
    "parity": Entry(_S + "languages", "U's exact readout of T_PARITY is k-PARITY on every bit string up to the given length"),
    "sinkhorn_convergence": Entry(_SINKHORN, "the Sinkhorn plan of a cost, enclosed to a certified bound at each eps", graph=False),
    "sinkhorn_fixed_point": Entry(_SINKHORN, "a positive rational coupling is exactly its own Sinkhorn plan (decided in QQ)", graph=False),
    "sinkhorn_limit": Entry(_SINKHORN, "a coupling with a zero entry is the W1 limit of exact positive Sinkhorn plans", graph=False),
    "sinkhorn_transformer": Entry(_SINKHORN, "a Sinkhorn Transformer's coupling, enclosed to a certified bound"),
    "sinkhorn_universality": Entry(_SINKHORN, "Sinkhorn Transformers of growing width: certified W1 bounds on fit and held-out texts", graph=False),
    "transport_plan": Entry(_P + "transport", "an exact optimal transport plan with its LP duality certificate; a given plan judged exactly", graph=False),
    "compiled": Entry(_P + "compiled.construction", "the compiled exact weights compute the construction exactly, SOp by SOp", graph=False),
    "compiled_program": Entry(_P + "compiled.program", "your RASP program (--file or --program), compiled exactly, equals its RASP evaluation on every input", graph=False),
    "compiled_softmax": Entry(_P + "compiled.softmax", "softmax attention at inverse temperature beta stays within a certified B(beta) of the compiled model", graph=False),
    "rasp_program": Entry(_P + "rasp_language.program", "a RASP-language program's output, exact (or in certified balls where it leaves the exact fields)"),
    "lipschitz_approx": Entry(_P + "approximation.approx", "the McShane RASP network is within a certified eps of a Lipschitz or Hölder target"),
    "lipschitz_rates": Entry(_P + "approximation.rates", "certified McShane errors as the grid step shrinks, against the theory's rates", graph=False),
    **{
        f"{base}_identity": Entry(_IDENTITY + "claims", f"{base}: the claim for ALL real inputs of its sizes, decided exactly")
        for base in ("transpose", "matmul", "softmax", "relu", "maxmin", "inverse3", "universal", "multihead", "encoder_layer", "encoder_layer_norm")
    },
    "hierarchy_identity": Entry(_IDENTITY + "hierarchy", "hierarchy: U(N, D, D_v) computes every smaller layer for ALL real inputs, decided exactly"),
    "compiled_identity": Entry(_IDENTITY + "compiled", "compiled: the exact weights compute the construction for ALL real inputs, decided exactly", graph=False),
    # The last three take about 13, 6 and 8 s of CPU to prove and verify (docs/every-size.md): prove-all --all proves them.
    **{
        f"{base}_every_size": Entry(_P + "every_size.claims", f"{what}, for EVERY size and all real inputs (symbolic proof)", graph=False, in_prove_all=base not in ("hierarchy", "multihead", "encoder_layer"))
        for base, what in (
            ("transpose", "transpose(r, c) maps M to M^T"),
            ("matmul", "matmul(r, k, c) maps A, B to AB"),
            ("softmax", "softmax_rows(r, c) maps S to softmax(S)"),
            ("relu", "relu(n) maps x to max(x, 0)"),
            ("maxmin", "maxmin(n) sorts each pair in decreasing order"),
            ("universal", "U(n, d, d_v) computes softmax(X A X^T) X V"),
            ("universal_tagged", "U on tagged tokens attends over the rows tagged 1"),
            ("hierarchy", "U(N, D, D_v) computes every smaller attention layer"),
            ("multihead", "multihead computes multi-head attention, h heads"),
            ("encoder_layer", "encoder_layer computes an encoder layer, h heads"),
        )
    },
    "tracr_model": Entry(_P + "tracr.model", "a model tracr compiled decodes to its RASP program's output on every input, in certified balls", graph=False, needs="tracr"),
}


@dataclass(frozen=True)
class Param:
    """One parameter of a claim, offered on the command line as ``--name``."""

    name: str
    type: Callable[[str], Any]
    default: Any
    help: str = ""


def flag(s: str) -> bool:
    """A switch (``--causal``): the command line gives it without a value; a certificate records 0 or 1."""
    if str(s) not in ("0", "1"):
        from attncert.exact.errors import ParseError

        raise ParseError(f"expected 0 or 1 for a switch, got {s!r:.20}")
    return s == "1"


@dataclass(frozen=True)
class Claim:
    """A provable statement: what it states, how to prove it, how to check a certificate of it.

    A certificate (already hash-checked) is verified in one of two ways, each
    returning the list of problems found (empty: it holds; malformed content
    raises ParseError):

    * ``check(doc)``: an independent check (:mod:`proofs.checkers`, which never
      imports the constructions) establishes the claim from the recorded data,
      then :func:`proofs.core.rebuild.rebuilt_differences` proves it again from the
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
    #: ``cost(**params)``: what a run will compute, from the parameters alone (proofs/core/cost.py).
    cost: Callable[..., Any] | None = None
    #: ``recorded(doc)``: the cost model's arguments a certificate gives beyond its parameters, read from its recorded
    #: inputs, for a claim whose parameters do not determine the cost (sinkhorn_convergence on files: a parameter names
    #: the cost file's format, and the recorded cost's range sets the precision); None where the parameters do.
    recorded: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    build: Callable[..., Any] | None = None
    #: ``rebuild(doc)``: prove again from the recorded parameters, reusing a witness that ``check``
    #: has already re-checked (a search result), so that verifying costs less than proving;
    #: without it the rebuild is ``prove(**params)``.
    rebuild: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    #: Whether a run interprets RASP-language source, bounded by the interpreter's limits (offered as options too).
    interprets: bool = False
    #: ``summary(doc)``: one line read from a certificate document alone (proofs/core/figures.py): a bound's
    #: figures, or why the claim does not hold; None where the table says it all.
    summary: Callable[[dict[str, Any]], str | None] | None = None

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def estimate(self, params: dict[str, Any], doc: dict[str, Any] | None = None) -> Any:
        """The cost model at these parameters (defaults for the rest), and of the certificate ``doc`` when given
        (:attr:`recorded`); a claim without one costs nothing."""
        from attncert.proofs.core.cost import Cost

        if not self.cost:
            return Cost()
        given = self.recorded(doc) if doc is not None and self.recorded is not None else {}
        return self.cost(**{**self.defaults(), **params, **given})


_CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.name in _CLAIMS:
        raise ValueError(f"claim {claim.name!r} registered twice")
    _CLAIMS[claim.name] = claim
    return claim


def registered(name: str) -> Claim:
    """A claim registered so far, by name (KeyError if its module has not been imported)."""
    return _CLAIMS[name]


def claim_names() -> list[str]:
    """Every claim's name, in prove-all's order, without loading any."""
    return list(INDEX)


def unknown_claim(name: str) -> str:
    """The line for a name that is not a claim, with the nearest names."""
    import difflib

    near = difflib.get_close_matches(name, INDEX, n=3)
    hint = f"; did you mean {' or '.join(near)}?" if near else " (attncert list shows the claims)"
    return f"unknown claim {name!r:.40}{hint}"


def available(name: str) -> bool:
    """Whether the optional package a claim needs (``Entry.needs``) is installed."""
    needs = INDEX[name].needs
    return needs is None or importlib.util.find_spec(needs) is not None


def load_claim(name: str) -> Claim:
    """The claim ``name``, importing its module (KeyError if there is no such claim)."""
    entry = INDEX[name]
    importlib.import_module(entry.module)
    return _CLAIMS[name]


def load_claims() -> dict[str, Claim]:
    """Every claim, in prove-all's order (each module imported)."""
    for module in dict.fromkeys(e.module for e in INDEX.values()):
        importlib.import_module(module)
    return {name: _CLAIMS[name] for name in INDEX}
