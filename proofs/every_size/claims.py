"""The every-size claims: ``CLAIM_every_size``, a construction claim for every size (docs/every-size.md).

``attncert prove CLAIM --for-all --every n,d,dv`` proves ``CLAIM_every_size``: for every value >= 1 of
the sizes named (the others fixed by the usual options) and all real inputs of those sizes, the
construction's output block is the reference and the rest is 0. The proof (:mod:`.prove`) and its
record are checked again by the independent checker (:mod:`proofs.checkers.every_size`), which uses
another solver (cvc5) and its own arithmetic, then rebuilt and compared in full.
"""

from __future__ import annotations

from typing import Any

import attncert.proofs.lemmas.matmul  # noqa: F401  (the construction claims generalised here register themselves)
import attncert.proofs.lemmas.maxmin  # noqa: F401
import attncert.proofs.lemmas.relu  # noqa: F401
import attncert.proofs.lemmas.softmax  # noqa: F401
import attncert.proofs.lemmas.transpose  # noqa: F401
import attncert.proofs.simulator.encoder  # noqa: F401
import attncert.proofs.simulator.multihead  # noqa: F401
import attncert.proofs.simulator.universal  # noqa: F401
from attncert.constructions.sizes.expr import SizeExpr, size
from attncert.exact import ParseError
from attncert.proofs.core.certify import certificate
from attncert.proofs.checkers.every_size import check_every_size
from attncert.proofs.core.cost import Cost
from attncert.proofs.every_size.prove import SPECS, NoProof, prove
from attncert.proofs.core.layout_claims import LAYOUT_CLAIMS
from attncert.proofs.core.inputs import size_param
from attncert.proofs.core.rebuild import recorded_params
from attncert.proofs.core.registry import Claim, Param, register

#: claim -> (its inputs, what the construction maps them to), for the statement.
STATEMENTS: dict[str, tuple[str, str]] = {
    "transpose": ("M (r x c)", "transpose(r, c) maps vec(M) to vec(M^T)"),
    "matmul": ("A (r x k), B (k x c)", "matmul(r, k, c) maps vec(A) ++ vec(B) to vec(AB), and the rest of its sequence to 0"),
    "softmax": ("S (r x c)", "softmax_rows(r, c) maps vec(S) to vec(softmax(S)), row-wise"),
    "relu": ("x (1 x n)", "relu(n) maps x to max(x, 0) entrywise"),
    "maxmin": ("x (1 x n)", "maxmin(n) maps x to each pair (x_2q, x_2q+1) in decreasing order, an odd last entry unchanged"),
    "universal": ("X (n x d), A (d x d), V (d x d_v)", "U(n, d, d_v) maps vec(X) ++ vec(A) ++ vec(V) to vec(softmax(X A X^T) X V), and the rest of its sequence to 0"),
    "universal_tagged": (
        "X (n x d), A (d x d), V (d x d_v) given as tagged tokens (value, tag), with tau_k the tag of X[k][0] in {0, 1} and some tau_k = 1",
        "U(n, d, d_v) maps the tagged sequence (padding (0, 0)) to vec(T_tau(X)), T_tau(X)[i][v] = sum_k tau_k e^{S_ik} (XV)[k][v] / "
        "sum_k tau_k e^{S_ik} with S = X A X^T (attention over the rows tagged as data), and the rest of its sequence to 0",
    ),
    "hierarchy": (
        "X (n x d), A (d x d), V (d x d_v) with n <= N, d <= D, d_v <= D_v",
        "U(N, D, D_v), on X, A, V zero-padded to N x D, D x D, D x D_v as tagged tokens (the padded rows of X tagged 0, every other "
        "token 1, the padding after them (0, 0)), gives T(X) = softmax(X A X^T) X V in the entries (i, j), i < n, j < d_v, of its "
        "N x D_v output block",
    ),
    "multihead": (
        "X (n x d), A_m (d x d), V_m (d x d_v), W_O (h d_v x d_o) (for a symbolic h, the A_m and V_m stacked as A (h d x d) and V (h d x d_v))",
        "multihead(n, d, d_v, h, d_o) maps its input to vec([T_1(X), ..., T_h(X)] W_O), and the rest of its sequence to 0",
    ),
    "encoder_layer": (
        "X (n x d), A_m (d x d), V_m (d x d_v), W_O (h d_v x d), W_1 (d x f), b_1 (1 x f), W_2 (f x d), b_2 (1 x d) (for a symbolic h, the A_m and V_m stacked as A (h d x d) and V (h d x d_v))",
        "encoder_layer(n, d, d_v, h, f) maps its input to vec(Y + ReLU(Y W_1 + b_1) W_2 + b_2) with Y = X + MHA(X), and the rest of its sequence to 0",
    ),
}

#: The size hierarchy's sizes: U's (N, D, D_v) and the layer's it simulates (n, d, d_v).
HIERARCHY_SIZES = tuple(
    size_param(name, default, help)
    for name, default, help in (
        ("N", 8, "rows of U's X"), ("D", 4, "columns of U's X"), ("Dv", 4, "columns of U's V"),
        ("n", 3, "rows of the layer's X (at most N)"), ("d", 2, "columns of the layer's X (at most D)"), ("dv", 2, "columns of the layer's V (at most D_v)"),
    )
)

#: The prover's CPU seconds at the default sizes, rounded up (measured by bench/bench_every_size.py), per head for the
#: claims whose heads are fixed: a rough guide for ``prove --estimate`` and prove-all's order, never a promise.
MEASURED_SECONDS = {
    "transpose": 0.2, "matmul": 0.3, "softmax": 0.2, "relu": 0.2, "maxmin": 0.2, "universal": 1.0, "universal_tagged": 1.0,
    "hierarchy": 4.0, "multihead": 1.2, "encoder_layer": 2.5,
}



def every_list(s: str) -> tuple[str, ...]:
    """The quantified sizes, ``n,d,dv``: names, each once (sorted, as the certificate records them)."""
    names = [x.strip() for x in str(s).split(",") if x.strip()]
    if not names or len(set(names)) != len(names):
        raise ParseError(f"--every names the quantified sizes once each, comma-separated, got {s!r:.40}")
    return tuple(sorted(names))


def refusal(e: NoProof) -> str:
    """The line for a proof that failed: unproven (a solver's unknown or sat, or forms that differ, with no concrete
    difference found), or false, only with the counterexample a concrete run found (its sizes, inputs, position
    and both values, computed exactly by the fixed-size machinery)."""
    c = e.counterexample
    if c is None:
        return f"{e} (no counterexample found: unproven, not false)"
    sizes = ", ".join(f"{k} = {v}" for k, v in sorted(c["sizes"].items()))
    where = f"position {c['position']} of its output holds {c['output']}, the reference {c['reference']}" if c["position"] is not None else str(c["output"])
    return f"{e}; the claim is FALSE: at {sizes}, on {c['inputs']} (seed {c['seed']}), run exactly, {where}"


class EverySizeClaim:
    """``BASE_every_size``: the construction claim BASE for every value of the quantified sizes."""

    def __init__(self, base: str):
        self.base = base
        self.spec = SPECS[base]
        self.sizes = HIERARCHY_SIZES if base == "hierarchy" else LAYOUT_CLAIMS[base.removesuffix("_tagged")].sizes

    @property
    def name(self) -> str:
        return f"{self.base}_every_size"

    def statement(self, every: tuple[str, ...], fixed: dict[str, int]) -> str:
        inputs, maps = STATEMENTS[self.base]
        each = ", ".join(f"{s} >= 1" for s in every)
        given = "".join(f", {s} = {v}" for s, v in sorted(fixed.items()))
        return (
            f"for every {each}{given} and all real {inputs}: {maps}; proven from the template by symbolic positions, "
            "index facts (SMT, QF_NIA) and the Σ normal form (docs/every-size.md)"
        )

    def params(self) -> tuple[Param, ...]:
        default = ",".join(self.spec.symbols)
        return (Param("every", every_list, default, "the sizes quantified (each >= 1); the others are fixed by their options"),) + tuple(self.sizes)

    def prove(self, every: Any = None, **sizes: Any) -> dict[str, Any]:
        every = every_list(",".join(every) if isinstance(every, tuple) else every or self.params()[0].default)
        unknown = [s for s in every if s not in self.spec.symbols]
        if unknown:
            raise ParseError(f"{self.base} has the sizes {', '.join(self.spec.symbols)}; --every names {unknown[0]!r}")
        fixed = {s: int(sizes.get(s, next(p.default for p in self.sizes if p.name == s))) for s in self.spec.symbols if s not in every}
        wrong = next(((a, b) for a, b in self.spec.at_most if a in fixed and b in fixed and fixed[a] > fixed[b]), None)
        if wrong is not None:  # the statement assumes a <= b: with both fixed otherwise it would be vacuous
            a, b = wrong
            raise ParseError(f"{self.base} needs {a} <= {b}, and {a} = {fixed[a]} > {b} = {fixed[b]}")
        try:
            proof = prove(self.spec, every, fixed)
        except NoProof as e:
            raise ParseError(refusal(e)) from None
        template = proof["template"]
        lay = self.spec.build(*(fixed[s] if s in fixed else SizeExpr.symbol(s) for s in self.spec.symbols)).layout
        return certificate(
            claim=self.name,
            params={"every": ",".join(every), **fixed},
            inputs={},
            construction={
                "template": template,
                "sizes": {"quantified": list(every), "fixed": fixed},
                "layout": {
                    "inputs": [{"name": n, "rows": size(r).text(), "cols": size(c).text()} for n, r, c in lay.inputs],
                    "output": {"rows": size(lay.output[0]).text(), "cols": size(lay.output[1]).text()},
                    "length": size(lay.length).text(),
                },
            },
            outputs={
                "cases": [c.to_json() for c in proof["cases"]],
                "regions": [r.to_json() for r in proof["regions"]],
                "facts": [f.to_json() for f in proof["facts"]],
            },
            reference={"function": STATEMENTS[self.base][1].split(" to ", 1)[1]},
            result={
                "relation": "identity",
                "holds": True,
                "statement": self.statement(every, fixed),
                "hypotheses": [f"{s} >= 1" for s in every] + [f"{a} <= {b}" for a, b in self.spec.at_most] + ([f"tag({self.spec.data_rows[0]})[k][0] in {{0, 1}} for k < {self.spec.data_rows[1]}, and some is 1"] if self.spec.data_rows else []),
                "cases": len(proof["cases"]),
                "regions": len(proof["regions"]),
                "facts": len(proof["facts"]),
                "solvers": {"prover": "z3", "checker": "cvc5"},
            },
        )

    def rebuild(self, doc: dict[str, Any]) -> dict[str, Any]:
        """Prove again from the recorded parameters: the quantified sizes and the fixed ones, no other."""
        kw = recorded_params(self.claim_object, doc, optional=tuple(p.name for p in self.sizes))
        every = kw.pop("every")
        given = doc["params"]
        extra = [s for s in given if s != "every" and s in every]
        if extra or any(s not in given for s in self.spec.symbols if s not in every):
            raise ParseError("params must give every fixed size and no quantified one")
        return self.prove(every, **{k: v for k, v in kw.items() if k not in every})

    def cost(self, every: Any = None, **params: Any) -> Cost:
        """The proof is about symbols: no quantified size makes it grow. Its time is the one measured with every
        size quantified (bench/bench_every_size.py, CPU seconds of the prover, rounded up), times the heads where
        their number is fixed (each head's sums are written out); a size fixed to a larger integer writes longer
        constant sums out and costs more."""
        quantified = every_list(",".join(every) if isinstance(every, tuple) else every or self.params()[0].default)
        heads = 1 if "h" in quantified or not params.get("h") else int(params["h"])
        return Cost(seconds=MEASURED_SECONDS[self.base] * heads, memory=200 << 20)

    def claim(self) -> Claim:
        self.claim_object = Claim(self.name, self.statement(tuple(self.spec.symbols), {}), self.prove, self.params(), check=check_every_size, cost=self.cost, rebuild=self.rebuild)
        return self.claim_object


for _base in STATEMENTS:
    register(EverySizeClaim(_base).claim())
