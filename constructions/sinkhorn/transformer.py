r"""The Sinkhorn Transformer: in-context encoders, the cost -<Q, K>, certified Sinkhorn; one graph.

Texts mu = sum_i a_i delta_{x_i} and nu = sum_j b_j delta_{y_j}
(:mod:`constructions.sinkhorn.texts`). The query encoder reads all of mu's
tokens at once, the key encoder all of nu's (:mod:`constructions.sinkhorn.encoder`),
so Q(mu)_i and K(nu)_j are contextual. The cost C_ij = -<Q(mu)_i, K(nu)_j>
is exact in EE while the encoders are (:mod:`constructions.sinkhorn.inner_cost`),
and the coupling is S_eps(C; a, b), certified in Ball
(:func:`constructions.sinkhorn.operator.sinkhorn`): the kernel exp(-C/eps) is
enclosed from C's exact value, at each precision the certificate needs.

The model *is* its computation graph (:mod:`constructions.sinkhorn.graph`):
:class:`SinkhornTransformer` holds the graph, and a run walks it node by node
in topological order (text, embed, attention, mlp, layer_norm, readout, cost,
sinkhorn), so what ``attncert graph`` draws and what a certificate records is
what is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx

from attncert.constructions.sinkhorn.encoder import Encoder, Features, apply_layer, embed, times
from attncert.constructions.sinkhorn.graph import SinkhornLayer, argument, decode, graph_from_json, graph_to_json, model_graph
from attncert.constructions.sinkhorn.inner_cost import EnclosedCost, ExactCost, inner_cost
from attncert.constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from attncert.constructions.sinkhorn.problem import CostEnclosure
from attncert.constructions.sinkhorn.texts import Text
from attncert.exact.domains.ball import Ball


@dataclass(frozen=True)
class ModelRun:
    """One evaluation: the features, the cost (exact or enclosed) and the certified Sinkhorn run."""

    Q: Features
    K: Features
    cost: CostEnclosure
    result: SinkhornResult


class SinkhornTransformer:
    """A Sinkhorn Transformer given by its computation graph."""

    def __init__(self, graph: nx.MultiDiGraph):
        self._graph = graph
        self.query, self.key, self.layer, self.ids = decode(graph)

    def graph(self) -> nx.MultiDiGraph:
        """The computation graph (what ``attncert graph`` draws and a certificate records)."""
        return self._graph

    @classmethod
    def build(cls, query: Encoder, key: Encoder, layer: SinkhornLayer) -> "SinkhornTransformer":
        return cls(model_graph(query, key, layer))

    @classmethod
    def from_json(cls, obj: Any) -> "SinkhornTransformer":
        return cls(graph_from_json(obj))

    def to_json(self) -> dict[str, Any]:
        return graph_to_json(self._graph)

    @cached_property
    def _chains(self) -> dict[str, list[tuple[int, Any]]]:
        """Per side, the encoder's nodes from the embedding to the readout, each with its decoded weights."""
        out = {}
        for side, top, enc in (("mu", self.ids["Q"], self.query), ("nu", self.ids["K"], self.key)):
            chain = [top]
            while self._graph.nodes[chain[-1]]["op"] != "embed":
                chain.append(argument(self._graph, chain[-1], 0))
            chain.reverse()
            out[side] = list(zip(chain, [enc.embed, *enc.layers, enc.readout]))
        return out

    def features(self, side: str, text: Text, prec: int) -> Features:
        """Q(mu) (side "mu") or K(nu) (side "nu"): the encoder's nodes walked from the text to the readout."""
        X: Features | None = None
        for v, weights in self._chains[side]:
            op = self._graph.nodes[v]["op"]
            if op == "embed":
                X = embed(text.points, text.weights, weights)
            elif op == "readout":
                X = Features(times(X.rows, weights, X.exact, prec), X.exact, X.enclosed_from)
            else:
                X = apply_layer(weights, X, prec, self._graph.nodes[v]["label"])
        return X

    def cost(self, mu: Text, nu: Text, Q: Features | None = None, K: Features | None = None) -> CostEnclosure:
        """The cost node: exact in EE when both encoders stayed exact, else re-enclosed per precision."""
        Q = Q or self.features("mu", mu, self.layer.prec)
        K = K or self.features("nu", nu, self.layer.prec)
        if Q.exact and K.exact:
            return ExactCost(inner_cost(Q.rows, K.rows, self.layer.prec))
        return EnclosedCost(lambda prec: inner_cost(self.features("mu", mu, prec).rows, self.features("nu", nu, prec).rows, prec), (mu.n, nu.n))

    def __call__(self, mu: Text, nu: Text) -> ModelRun:
        """The whole graph on (mu, nu): features, cost, and the certified coupling (the sinkhorn node)."""
        Q, K = self.features("mu", mu, self.layer.prec), self.features("nu", nu, self.layer.prec)
        C = self.cost(mu, nu, Q, K)
        lay = self.layer
        r = sinkhorn(C, mu.weights, nu.weights, lay.eps, Ball(lay.prec), tol=lay.tol, method=lay.method)
        return ModelRun(Q, K, C, r)
