"""How matrices are laid out in one token sequence, and how results are read back.

Inputs are placed one after another from position 0, each row-major
(vec(M) = M[0][0], M[0][1], ..., as in docs/design.md); positions after the last
input hold the padding token 0 up to the sequence length N that the
construction needs. The output matrix is read row-major from positions
0 .. rows*cols - 1; every construction documents what the other positions hold.

A layout is plain data, so a certificate records it and a verifier can encode
and decode without running any construction code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import networkx as nx

from attncert.constructions import rasp
from attncert.constructions.sizes.expr import symbolic
from attncert.exact import Domain, ParseError
from attncert.exact.matrices import Rows, shape


@dataclass(frozen=True)
class Layout:
    inputs: tuple[tuple[str, int, int], ...]  # (name, rows, cols), consecutive from position 0
    output: tuple[int, int]  # (rows, cols) read from position 0
    length: int  # sequence length N

    def __post_init__(self) -> None:
        used = sum(r * c for _, r, c in self.inputs)
        if any(symbolic(x) for x in (used, self.length, self.output[0] * self.output[1])):
            return  # a template's layout: that it fits is a fact of the proof for every size
        if used > self.length or self.output[0] * self.output[1] > self.length:
            raise ValueError(f"layout does not fit in length {self.length}")

    def encode(self, mats: Mapping[str, Rows], domain: Domain) -> list[Any]:
        seq: list[Any] = []
        for name, r, c in self.inputs:
            if name not in mats:
                raise ParseError(f"missing input matrix {name!r}")
            if shape(mats[name]) != (r, c):
                raise ParseError(f"input {name} must be {r}x{c}, got {shape(mats[name])[0]}x{shape(mats[name])[1]}")
            seq += [domain.native(x) for row in mats[name] for x in row]
        # The padding 0 as the domain's evaluators hold it (in EE an fmpq: rational stages stay rational).
        return seq + [domain.native(0)] * (self.length - len(seq))

    def decode(self, seq: Sequence[Any]) -> Rows:
        r, c = self.output
        return [list(seq[i * c : (i + 1) * c]) for i in range(r)]

    def rest(self, seq: Sequence[Any]) -> list[Any]:
        """The positions after the output block."""
        r, c = self.output
        return list(seq[r * c :])

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": [{"name": n, "rows": r, "cols": c} for n, r, c in self.inputs],
            "output": {"rows": self.output[0], "cols": self.output[1]},
            "length": self.length,
        }

    @classmethod
    def from_json(cls, obj: Any) -> "Layout":
        try:
            ins = tuple((d["name"], _pos_int(d["rows"]), _pos_int(d["cols"])) for d in obj["inputs"])
            out = (_pos_int(obj["output"]["rows"]), _pos_int(obj["output"]["cols"]))
            layout = cls(ins, out, _pos_int(obj["length"]))
        except (KeyError, TypeError, ValueError) as e:
            raise ParseError(f"malformed layout: {e}") from None
        if not all(isinstance(n, str) for n, _, _ in layout.inputs):
            raise ParseError("malformed layout: input names must be strings")
        return layout


def _pos_int(x: Any) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x < 1:
        raise ValueError(f"expected a positive integer, got {x!r:.20}")
    return x


@dataclass(frozen=True)
class Construction:
    """A RASP program together with the layout of its input and output."""

    name: str
    program: rasp.SOp
    layout: Layout

    def graph(self) -> nx.MultiDiGraph:
        return rasp.to_graph(self.program)

    def run(self, mats: Mapping[str, Rows], domain: Domain, graph: nx.MultiDiGraph | None = None) -> list[Any]:
        """The whole output sequence on the given input matrices."""
        g = graph if graph is not None else self.graph()
        return rasp.evaluate_graph(g, self.layout.encode(mats, domain), domain)["output"]

    def __call__(self, mats: Mapping[str, Rows], domain: Domain) -> Rows:
        return self.layout.decode(self.run(mats, domain))
