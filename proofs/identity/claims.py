"""The for-all-inputs claims: ``CLAIM_identity`` for every construction claim (docs/identity.md).

``attncert prove CLAIM --for-all`` proves ``CLAIM_identity``: the statement of CLAIM for every
real input of the given sizes, where the recorded divisors are nonzero, decided exactly over
the symbolic field. Each is registered from the construction claim it generalises (its
construction, sizes and cost), with the reference of :data:`proofs.checkers.references.OVER_ANY_FIELD`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import attncert.proofs.lemmas.inverse3  # noqa: F401  (the construction claims generalised here register themselves)
import attncert.proofs.lemmas.matmul  # noqa: F401
import attncert.proofs.lemmas.maxmin  # noqa: F401
import attncert.proofs.lemmas.relu  # noqa: F401
import attncert.proofs.lemmas.softmax  # noqa: F401
import attncert.proofs.lemmas.transpose  # noqa: F401
import attncert.proofs.simulator.encoder  # noqa: F401
import attncert.proofs.simulator.encoder_norm  # noqa: F401
import attncert.proofs.simulator.multihead  # noqa: F401
import attncert.proofs.simulator.universal  # noqa: F401
from attncert.proofs.core import cost as costs
from attncert.proofs.checkers import references
from attncert.proofs.core.cost import Cost
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.identity.check import check_identity
from attncert.proofs.identity.prove import SymbolicTask, identity_sections, prove_symbolic
from attncert.proofs.core.layout_claims import LAYOUT_CLAIMS
from attncert.proofs.core.registry import Claim, Param, register, registered

#: claim -> (what its inputs are, what it maps them to, the hypotheses in words).
STATEMENTS: dict[str, tuple[str, str, str]] = {
    "transpose": ("M (r x c)", "transpose(r, c) maps vec(M) to vec(M^T)", ""),
    "matmul": ("A (r x k), B (k x c)", "matmul(r, k, c) maps vec(A) ++ vec(B) to vec(AB), and the rest to 0", ""),
    "softmax": ("S (r x c)", "softmax_rows(r, c) maps vec(S) to vec(softmax(S)), row-wise, and the rest to 0", ""),
    "relu": ("x (1 x n)", "relu(n) maps x to max(x, 0) entrywise", ""),
    "maxmin": ("x (1 x n)", "maxmin(n) maps x to each pair (x_2q, x_2q+1) in decreasing order, an odd last entry unchanged", ""),
    "inverse3": ("M (3 x 3)", "inverse3 maps vec(M) to vec(M^-1)", " with det M != 0"),
    "universal": ("X (n x d), A (d x d), V (d x d_v)", "U(n, d, d_v) maps vec(X) ++ vec(A) ++ vec(V) to vec(softmax(X A X^T) X V), and the rest to 0", ""),
    "multihead": (
        "X (n x d), A_m (d x d), V_m (d x d_v), W_O (h d_v x d_o)",
        "multihead(n, d, d_v, h, d_o) maps its input to vec([T_1(X), ..., T_h(X)] W_O), and the rest to 0",
        "",
    ),
    "encoder_layer": (
        "X (n x d), A_m (d x d), V_m (d x d_v), W_O (h d_v x d), W_1 (d x f), b_1 (1 x f), W_2 (f x d), b_2 (1 x d)",
        "encoder_layer(n, d, d_v, h, f) maps its input to vec(Y + ReLU(Y W_1 + b_1) W_2 + b_2) with Y = X + MHA(X), and the rest to 0",
        "",
    ),
    "encoder_layer_norm": (
        "X, A_m, V_m, W_O, W_1, b_1, W_2, b_2 as for encoder_layer and gamma, beta (1 x d)",
        "encoder_layer_norm(n, d, d_v, h, f, delta) maps its input to vec(LN(Z)), LN(Z)_ij = gamma_j (Z_ij - mu_i) "
        "(sigma_i^2 + delta)^(-1/2) + beta_j with Z the encoder layer's output, and the rest to 0, with (.)^(-1/2) and ReLU of "
        "exponential expressions taken as uninterpreted functions of their arguments (so it holds for the real ones)",
        "",
    ),
}

#: Parameters of a construction claim that a for-all-inputs claim does not take: it has no inputs to draw or read,
#: and no precision (nothing is enclosed).
NOT_SIZES = ("seed", "inputs", "domain", "prec")


@dataclass(frozen=True)
class IdentityClaim:
    """``BASE_identity``: the construction claim BASE's statement for all inputs of its sizes.

    The construction, the parameters (its sizes, and for the layer norm delta) and the cost model
    are the registered base claim's; the reference is :data:`proofs.checkers.references.OVER_ANY_FIELD`'s,
    given the parameters that are not sizes (delta)."""

    base: str

    @property
    def name(self) -> str:
        return f"{self.base}_identity"

    def statement(self) -> str:
        inputs, maps, hypotheses = STATEMENTS[self.base]
        return f"for all real {inputs}{hypotheses}: {maps}; decided exactly as an identity of functions of the entries"

    def params(self) -> tuple[Param, ...]:
        return tuple(p for p in registered(self.base).params if p.name not in NOT_SIZES)

    def prove(self, **params: Any) -> dict[str, Any]:
        base = registered(self.base)
        cons = base.build(**params)
        sizes = {p.name for p in LAYOUT_CLAIMS[self.base].sizes} if self.base in LAYOUT_CLAIMS else set(SIZE_NAMES)
        reference = functools.partial(references.OVER_ANY_FIELD[self.base], **{k: v for k, v in params.items() if k not in sizes})
        sections = identity_sections(cons, prove_symbolic(SymbolicTask.of_construction(cons, reference)))
        return certificate(
            claim=self.name,
            params=dict(params),
            inputs=sections["inputs"],
            construction=sections["construction"],
            outputs=sections["outputs"],
            reference={"function": STATEMENTS[self.base][1].split(" to ", 1)[1]},
            result={**sections["result"], "statement": self.statement()},
        )

    def cost(self, **params: Any) -> Cost:
        """The symbolic proof's variables, terms and memory (proofs/core/cost.py), on the one-input claim's sequence."""
        own = registered(self.base).cost
        return costs.identity(self.base, own(**params).positions if own else 0, **params)

    def claim(self) -> Claim:
        base = registered(self.base)
        return Claim(self.name, self.statement(), self.prove, self.params(), check=check_identity, build=base.build, cost=self.cost)


#: The encoder layer's sizes (its layer norm's other parameter, delta, reaches the reference).
SIZE_NAMES = ("n", "d", "dv", "h", "f")


for _base in STATEMENTS:
    register(IdentityClaim(_base).claim())
