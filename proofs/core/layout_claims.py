"""Claims about one construction on matrix inputs: prove and verify from one description.

Most claims (the lemmas, U, multi-head, the encoder layer) say: the RASP program
``build(**sizes)`` maps the encoded input matrices to ``reference(inputs)``, exactly,
in the output block, and to 0 elsewhere. :func:`layout_claim` turns such a
description into a registered :class:`~proofs.core.registry.Claim` whose ``prove`` writes
the certificate and whose ``verify`` checks one independently:

1. the inputs are read from the certificate (with limits) in the recorded domain;
2. the reference is recomputed from them alone by ``reference`` (functions of
   :mod:`proofs.checkers.references`, which never import the constructions);
3. the recorded graph is loaded (registry functions only, nothing executed from
   the file) and re-evaluated on the encoded inputs;
4. the recorded outputs, the recorded reference and the recorded result must all
   agree with what was recomputed, and the recorded graph must be exactly the one
   attncert builds for the recorded sizes;
5. finally every claim field (statement, size, layout, ...) must be exactly what
   proving on the recorded inputs writes, so that no field can be altered.
"""

from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from attncert.constructions import rasp
from attncert.constructions.layout import Construction, Layout
from attncert.exact import Domain, EENumber, ParseError
from attncert.exact.matrices import Rows, matrix_from_json
from attncert.proofs.core.inputs import EXACT_DOMAINS, INPUTS, SEED, exact_domain, inputs_for, prove_construction, read_inputs
from attncert.proofs.core import figures, memory
from attncert.proofs.core.cost import over_limits
from attncert.proofs.core.certify import differing_fields
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.registry import Claim, Param


@dataclass(frozen=True)
class LayoutClaim:
    name: str
    statement: str
    build: Callable[..., Construction]
    reference: Callable[[Mapping[str, Rows], Domain], Rows]
    sizes: tuple[Param, ...]
    #: The domain the claim is decided in, or None if it is the ``domain`` parameter.
    domain: str | None = "QQ"
    #: Domain of the random inputs ("QQ" for rational inputs lifted into EE).
    input_domain: str | None = None
    accept: Callable[[Mapping[str, Rows]], bool] = field(default=lambda mats: True)
    #: The cost model (proofs/core/cost.py) at the sizes.
    cost: Callable[..., Any] | None = None

    def params(self) -> tuple[Param, ...]:
        extra = () if self.domain else (Param("domain", str, "EE", f"exact domain: {' or '.join(EXACT_DOMAINS)}"),)
        return self.sizes + (SEED,) + extra + (INPUTS,)

    def prove(self, seed: int = 0, inputs: str | None = None, domain: str | None = None, **sizes: int) -> dict:
        dom = exact_domain(self.domain or domain or "EE")
        cons = self.build(**sizes)
        mats = self.inputs(seed, inputs, cons, dom)
        origin = {"seed": seed} if inputs is None else {"inputs": "file"}
        return prove_construction(cons, mats, self.reference(mats, dom), dom, {**sizes, **origin}, self.statement)

    def inputs(self, seed: int, inputs: str | None, cons: Construction, dom: Domain) -> dict[str, Rows]:
        gen = exact_domain(self.input_domain) if self.input_domain else dom
        shapes = {name: (r, c) for name, r, c in cons.layout.inputs}
        mats = inputs_for(seed, inputs, shapes, gen, self.accept)
        return {k: [[dom.native(x) for x in row] for row in m] for k, m in mats.items()}

    def verify(self, doc: dict[str, Any]) -> list[str]:
        params = _object(doc, "params")
        result = _object(doc, "result")
        dom = exact_domain(result.get("domain"))
        if self.domain and dom.name != self.domain:
            return [f"claim {self.name} is decided in {self.domain}, the certificate says {dom.name}"]
        sizes = recorded_sizes(params, self.sizes)
        cons = self.build(**sizes)
        recorded = _object(doc, "construction")
        if Layout.from_json(recorded.get("layout")) != cons.layout:
            return ["the recorded layout is not the one of this construction at these sizes"]
        mats = recorded_matrices(doc, cons, dom)
        if self.input_domain == "QQ":
            mats = {name: [[_rational(x, name) for x in row] for row in m] for name, m in mats.items()}
        problems = []
        ref = self.reference(mats, dom)
        out_rec = matrix_from_json(_object(doc, "outputs").get("output"), dom)
        ref_rec = matrix_from_json(_object(doc, "reference").get("output"), dom)
        if not _equal(ref_rec, ref, dom):
            problems.append("the recorded reference differs from the reference recomputed from the inputs")
        g = rasp.graph_from_json(recorded.get("graph"))
        seq = rasp.evaluate_graph(g, cons.layout.encode(mats, dom), dom)["output"]
        out, rest = cons.layout.decode(seq), cons.layout.rest(seq)
        rest_rec = _object(doc, "outputs").get("rest")
        if not isinstance(rest_rec, list):
            raise ParseError('certificate field "outputs.rest" must be a list')
        if not _equal(out_rec, out, dom) or not _equal([[dom.from_json(v) for v in rest_rec]], [rest], dom):
            problems.append("re-evaluating the recorded graph does not give the recorded output")
        holds = _equal(out, ref, dom) and all(dom.sign(v) == 0 for v in rest)
        if result.get("holds") is not holds:
            problems.append(f"the recorded result says holds={result.get('holds')!r}, recomputation says {holds}")
        elif not holds:
            problems.append("the construction's output differs from the reference: the claim does not hold")
        if rasp.graph_to_json(g) != rasp.graph_to_json(cons.graph()):
            problems.append("the recorded graph is not the graph attncert builds for these sizes")
        # Where the inputs came from: a seed (then they must be the seed's) or a file.
        origin = recorded_origin(params)
        if "seed" in origin:
            if not all(_equal(mats[k], m, dom) for k, m in self.inputs(origin["seed"], None, cons, dom).items()):
                problems.append("the recorded inputs are not the ones the recorded seed gives")
        if not problems:  # every recorded field, statement and size included, must be its recomputation
            # The recorded graph is the one attncert builds (checked above), so its output is reused.
            expected = prove_construction(cons, mats, ref, dom, {**sizes, **origin}, self.statement, seq)
            problems += differing_fields(doc, expected)
        return problems

    def estimate(self, **params: Any) -> Any:
        """The cost model, with the memory predicted from the construction's schedule (proofs/core/memory.py):
        the certificate records every position, in the claim's domain."""
        cost = self.cost(**params)
        if over_limits(cost):  # refused on its sizes: building it (h heads' inputs, say) could take as long as the run
            return cost
        g = self.build(**{p.name: params[p.name] for p in self.sizes}).graph()
        domain = self.domain or params.get("domain") or "EE"
        return replace(cost, memory=memory.of_graph(g, cost.positions, domain))

    def claim(self) -> Claim:
        LAYOUT_CLAIMS[self.name] = self
        cost = self.estimate if self.cost else None
        return Claim(self.name, self.statement, self.prove, self.params(), verify=self.verify, build=self.build, cost=cost, summary=summary)


def summary(doc: dict[str, Any]) -> str | None:
    """Why a layout claim does not hold: the first entry where the output differs from the reference, or a
    nonzero position after the output block; nothing to add when it holds (the table says exact_equal)."""
    r = doc["result"]
    if r["holds"]:
        return None
    why = []
    if r["mismatches"]:
        i, j = r["mismatches"][0]["row"], r["mismatches"][0]["col"]
        got, want = doc["outputs"]["output"][i][j], doc["reference"]["output"][i][j]
        why.append(f"the output differs from the reference at row {i}, column {j}: {figures.cut(str(got), 40)}, not {figures.cut(str(want), 40)}")
    if not r["rest_is_zero"]:
        why.append("a position after the output block is not 0")
    return "does not hold: " + "; ".join(why)


#: Every layout claim by name, as registered (the compiler's claim compiles their constructions).
LAYOUT_CLAIMS: dict[str, LayoutClaim] = {}


def sizes_from_inputs(claim: Claim, path: str, given: Mapping[str, Any]) -> dict[str, int]:
    """The sizes at which ``claim``'s construction takes the matrices of the input file at ``path``; the sizes
    in ``given`` (the command line's) are kept.

    The sizes are the claim's positive-integer parameters that its builder takes. The construction is built
    once with them at distinct primes (>= 5: no constant dimension, 1 or 3, and no product of two sizes is
    one): a size is then the dimension of the file's matrix where its prime appears. A size that no dimension
    shows (the number of heads: matrices A1, A2, ...) is the least value at which the construction's matrices
    are the file's, by name and shape. Whatever is not determined keeps its value, and reading the file at
    these sizes says what does not fit (:func:`proofs.core.inputs.load_inputs`)."""
    names = set(inspect.signature(claim.build).parameters)
    sizes = {p.name: given.get(p.name, p.default) for p in claim.params if p.name in names and p.type is positive_int}
    free = [name for name in sizes if name not in given]
    shapes = {k: (len(m), len(m[0])) for k, m in read_inputs(path).items() if isinstance(m, list) and m and isinstance(m[0], list)}
    if not free or not shapes:
        return sizes
    extra = {p.name: given.get(p.name, p.default) for p in claim.params if p.name in names and p.name not in sizes}
    primes = iter(q for q in range(5, 10**4) if all(q % k for k in range(2, q)) and q not in sizes.values())
    probe = {**sizes, **{name: next(primes) for name in free}}
    layout = _layout(claim, probe, extra)
    where = {v: (m, axis) for m, r, c in (layout.inputs if layout else ()) for axis, v in enumerate((r, c))}
    found = {name: shapes[where[probe[name]][0]][where[probe[name]][1]] for name in free if probe[name] in where and where[probe[name]][0] in shapes}
    sizes.update(found)
    unseen = [name for name in free if name not in found]
    for values in itertools.product(range(1, len(shapes) + 1), repeat=len(unseen)):
        layout = _layout(claim, {**sizes, **dict(zip(unseen, values))}, extra)
        if layout and {m: (r, c) for m, r, c in layout.inputs} == shapes:
            return {**sizes, **dict(zip(unseen, values))}
    return sizes


def _layout(claim: Claim, sizes: dict[str, int], extra: dict[str, Any]) -> Layout | None:
    """The construction's layout at these sizes, or None where the builder refuses them."""
    try:
        return claim.build(**sizes, **extra).layout
    except (ParseError, ValueError):
        return None


def recorded_sizes(params: dict[str, Any], sizes: tuple[Param, ...]) -> dict[str, int]:
    """The recorded sizes, each a positive integer (else ParseError)."""
    out = {}
    for p in sizes:
        v = params.get(p.name)
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ParseError(f"parameter {p.name} must be a positive integer, got {v!r:.20}")
        out[p.name] = v
    return out


def recorded_origin(params: dict[str, Any]) -> dict[str, Any]:
    """Where the recorded inputs came from: ``{"seed": s}`` (an integer) or ``{"inputs": "file"}``."""
    if "seed" not in params:
        return {"inputs": "file"}
    seed = params["seed"]
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ParseError("parameter seed must be an integer")
    return {"seed": seed}


def recorded_matrices(doc: dict[str, Any], cons: Construction, dom: Domain) -> dict[str, Rows]:
    """The recorded input matrices of ``cons``'s layout, read in ``dom``, each of its recorded shape."""
    inputs = _object(doc, "inputs")
    mats = {}
    for name, r, c in cons.layout.inputs:
        m = matrix_from_json(inputs.get(name), dom)
        if (len(m), len(m[0])) != (r, c):
            raise ParseError(f"input {name} must be {r}x{c}")
        mats[name] = m
    return mats


def _object(doc: dict[str, Any], key: str) -> dict[str, Any]:
    v = doc.get(key)
    if not isinstance(v, dict):
        raise ParseError(f'certificate field "{key}" must be an object')
    return v


def _rational(x: Any, name: str) -> Any:
    """The claim is about rational inputs: an EE input must have a rational value."""
    q = x.rational_value() if isinstance(x, EENumber) else x
    if q is None:
        raise ParseError(f"input {name} must be rational, got {x}")
    return q


def _equal(a: Rows, b: Rows, dom: Domain) -> bool:
    return len(a) == len(b) and all(len(ra) == len(rb) and all(dom.eq(x, y) for x, y in zip(ra, rb)) for ra, rb in zip(a, b))

