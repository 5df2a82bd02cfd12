r"""A recorded Sinkhorn Transformer, read and run by the verifier's own code (never the prover's).

The certificate records the model as a graph (format ``attncert-sinkhorn-transformer/1``:
nodes text, embed, attention, mlp, layer_norm, readout, cost, sinkhorn; edges by
argument position). This module reads it with its own parser (the two chains
text -> embed -> layers -> readout feeding the cost node, the cost and both
texts feeding the sinkhorn node, every weight's shape) and evaluates it in arb
only, at any precision, on balls that contain the exact values:

* tokens t_i = (x_i, a_i, 1), X = T E;
* attention: X + [T_1(X), ..., T_h(X)] W_O, T_m(X) = softmax(X A_m X^T)(X V_m), row-wise;
* mlp: X + max(X W_1 + b_1, 0) W_2 + b_2;
* layer_norm: gamma (x - mean x) / sqrt(var x + delta) + beta per row;
* readout: X R;  cost: C_ij = -<Q_i, K_j>.

Every arb operation encloses its exact result for all points of its arguments,
so the final balls contain the exact cost whatever route the prover took (EE or
arb); :class:`~proofs.checkers.sinkhorn.problem.BallCost` hands them to the Sinkhorn
theorems at the precision each needs.
"""

from __future__ import annotations

from typing import Any

from flint import arb, ctx, fmpq

from attncert.exact import ParseError
from attncert.exact.matrices import Rows
from attncert.proofs.checkers.sinkhorn.problem import BallCost
from attncert.proofs.checkers.reading import qmatrix, rational, whole

FORMAT = "attncert-sinkhorn-transformer/1"
ARITY = {"text": 0, "embed": 1, "attention": 1, "mlp": 1, "layer_norm": 1, "readout": 1, "cost": 2, "sinkhorn": 3}
LAYERS = ("attention", "mlp", "layer_norm")


class RecordedModel:
    """The model of a recorded graph: per side (mu, nu) its chain of (op, weights), and the Sinkhorn parameters."""

    def __init__(self, obj: Any):
        if not isinstance(obj, dict) or obj.get("format") != FORMAT:
            raise ParseError(f"the model must be a graph of format {FORMAT}")
        nodes, edges, outputs = obj.get("nodes"), obj.get("edges"), obj.get("outputs")
        if not isinstance(nodes, list) or not isinstance(edges, list) or not isinstance(outputs, dict):
            raise ParseError("a model graph has lists nodes, edges and an object outputs")
        self.nodes: dict[int, dict] = {}
        for n in nodes:
            if not isinstance(n, dict) or n.get("op") not in ARITY or not isinstance(n.get("params"), dict) or not whole(n.get("id")) or n["id"] in self.nodes:
                raise ParseError("a model node must have a fresh integer id, a known op and params")
            self.nodes[n["id"]] = n
        self.args: dict[int, list[int]] = {v: [-1] * ARITY[n["op"]] for v, n in self.nodes.items()}
        for e in edges:
            # whole(): True is a key of {1: ...}, so a "source": true would name node 1
            ok = isinstance(e, dict) and whole(e.get("source")) and whole(e.get("target")) and e["source"] in self.nodes and e["target"] in self.nodes
            slots = self.args[e["target"]] if ok else []
            if not ok or not whole(e.get("arg")) or not 0 <= e["arg"] < len(slots) or slots[e["arg"]] != -1:
                raise ParseError("a model edge must join two nodes at a free argument position")
            slots[e["arg"]] = e["source"]
        if any(-1 in a for a in self.args.values()):
            raise ParseError("a model node lacks an argument")
        sink = outputs.get("coupling")
        if set(outputs) != {"coupling"} or not whole(sink) or sink not in self.nodes or self.nodes[sink]["op"] != "sinkhorn":
            raise ParseError("the model's output must be its sinkhorn node")
        cost, mu, nu = self.args[sink]
        if self.nodes[cost]["op"] != "cost" or self.nodes[cost]["params"] != {"rule": "C_ij = -<Q(mu)_i, K(nu)_j>"}:
            raise ParseError("the sinkhorn node's first argument must be the cost -<Q, K>")
        self.chains = {side: self._chain(top, text, side) for side, top, text in (("mu", self.args[cost][0], mu), ("nu", self.args[cost][1], nu))}
        used = {sink, cost, mu, nu} | {v for c in self.chains.values() for v, _ in c}
        if used != set(self.nodes):
            raise ParseError("every node of the model must feed its sinkhorn node")
        self.width = len(self.chains["mu"][-1][1]["R"][0])
        if len(self.chains["nu"][-1][1]["R"][0]) != self.width:
            raise ParseError("the query and key features have different widths")
        p = self.nodes[sink]["params"]
        if set(p) != {"eps", "tol", "method", "prec"}:
            raise ParseError("the sinkhorn node has the parameters eps, tol, method, prec")
        self.eps, self.tol = rational(p["eps"]), rational(p["tol"])

    def _chain(self, top: int, text: int, side: str) -> list[tuple[int, dict[str, Any]]]:
        """[(embed, weights), (layer, weights)..., (readout, weights)], each weight read and its shape checked."""
        if self.nodes[text]["op"] != "text" or self.nodes[text]["params"] != {"side": side}:
            raise ParseError(f"the {side} text node is not where the {side} argument of the sinkhorn node says")
        if self.nodes[top]["op"] != "readout":
            raise ParseError(f"the {side} features must come from a readout node")
        path = [top, self.args[top][0]]
        while self.nodes[path[-1]]["op"] in LAYERS:
            path.append(self.args[path[-1]][0])
            if path[-1] in path[:-1]:
                raise ParseError(f"the {side} encoder has a cycle")
        if self.nodes[path[-1]]["op"] != "embed" or self.args[path[-1]][0] != text:
            raise ParseError(f"the {side} encoder is not text -> embed -> layers -> readout")
        path.reverse()
        E = qmatrix(self.nodes[path[0]]["params"].get("E"))
        d, out = len(E[0]), [(path[0], {"E": E})]
        for v in path[1:]:
            out.append((v, _weights(self.nodes[v]["op"], self.nodes[v]["params"], d)))
        return out

    def features(self, side: str, points: Rows, weights: list[fmpq], prec: int) -> list[list[arb]]:
        """Balls containing Q(mu) (side "mu") or K(nu) (side "nu") at prec bits."""
        chain = self.chains[side]
        with ctx.workprec(prec):
            T = [[arb(c) for c in p] + [arb(w), arb(1)] for p, w in zip(points, weights)]
            if len(T[0]) != len(chain[0][1]["E"]):
                raise ParseError(f"the {side} embedding reads tokens of {len(chain[0][1]['E'])} entries, the text's have {len(T[0])}")
            X = _mul(T, chain[0][1]["E"])
            for v, w in chain[1:]:
                X = _layer(self.nodes[v]["op"], w, X)
            return X

    def cost(self, mu: tuple[Rows, list[fmpq]], nu: tuple[Rows, list[fmpq]]) -> BallCost:
        """C = -<Q(mu), K(nu)> as balls at any precision, by this module's forward pass."""

        def forward(prec: int) -> list[list[arb]]:
            Q, K = self.features("mu", *mu, prec), self.features("nu", *nu, prec)
            with ctx.workprec(prec):
                return [[-sum((q * k for q, k in zip(qi, kj)), arb(0)) for kj in K] for qi in Q]

        return BallCost(forward, (len(mu[1]), len(nu[1])))


def _shape(M: Rows, rows: int, cols: int | None, what: str) -> Rows:
    if len(M) != rows or (cols is not None and len(M[0]) != cols):
        raise ParseError(f"{what} must be {rows}x{cols or 'k'}, it is {len(M)}x{len(M[0])}")
    return M


def _vec(v: Any, n: int, what: str) -> list[fmpq]:
    if not isinstance(v, list) or len(v) != n:
        raise ParseError(f"{what} must be a list of {n} rationals")
    return [rational(x) for x in v]


def _weights(op: str, p: dict[str, Any], d: int) -> dict[str, Any]:
    """One node's weights, read and shape-checked for a residual stream of width d."""
    if op == "readout":
        return {"R": _shape(qmatrix(p.get("R")), d, None, "R")}
    if op == "attention":
        heads = p.get("heads")
        if not isinstance(heads, list) or not heads or not all(isinstance(h, dict) for h in heads):
            raise ParseError("attention heads must be a non-empty list")
        hv = [(_shape(qmatrix(h.get("A")), d, d, "A"), qmatrix(h.get("V"))) for h in heads]
        dv = len(hv[0][1][0])
        for _, V in hv:
            _shape(V, d, dv, "V")
        return {"heads": hv, "W_O": _shape(qmatrix(p.get("W_O")), len(hv) * dv, d, "W_O")}
    if op == "mlp":
        W1 = _shape(qmatrix(p.get("W1")), d, None, "W1")
        f = len(W1[0])
        return {"W1": W1, "b1": _vec(p.get("b1"), f, "b1"), "W2": _shape(qmatrix(p.get("W2")), f, d, "W2"), "b2": _vec(p.get("b2"), d, "b2")}
    delta = rational(p.get("delta"))
    if not delta > 0:
        raise ParseError("a layer norm's delta must be > 0")
    return {"gamma": _vec(p.get("gamma"), d, "gamma"), "beta": _vec(p.get("beta"), d, "beta"), "delta": delta}


def _mul(X: list[list[arb]], W: Rows) -> list[list[arb]]:
    return [[sum((x * W[t][c] for t, x in enumerate(row)), arb(0)) for c in range(len(W[0]))] for row in X]


def _layer(op: str, w: dict[str, Any], X: list[list[arb]]) -> list[list[arb]]:
    """One node in arb (the working precision is the caller's)."""
    if op == "readout":
        return _mul(X, w["R"])
    if op == "attention":
        heads = []
        for A, V in w["heads"]:
            XA, XV = _mul(X, A), _mul(X, V)
            out = []
            for xa in XA:
                e = [sum((u * v for u, v in zip(xa, xk)), arb(0)).exp() for xk in X]
                total = sum(e, arb(0))
                out.append([sum((ek * XV[k][c] for k, ek in enumerate(e)), arb(0)) / total for c in range(len(V[0]))])
            heads.append(out)
        mha = _mul([sum((h[i] for h in heads), []) for i in range(len(X))], w["W_O"])
        return [[x + y for x, y in zip(r, s)] for r, s in zip(X, mha)]
    if op == "mlp":
        H = [[(h + b).max(arb(0)) for h, b in zip(row, w["b1"])] for row in _mul(X, w["W1"])]
        return [[x + o + b for x, o, b in zip(r, s, w["b2"])] for r, s in zip(X, _mul(H, w["W2"]))]
    out = []
    for row in X:
        mean = sum(row, arb(0)) / len(row)
        c = [x - mean for x in row]
        scale = (sum((t * t for t in c), arb(0)) / len(row) + arb(w["delta"])).rsqrt()
        out.append([g * t * scale + b for g, t, b in zip(w["gamma"], c, w["beta"])])
    return out
