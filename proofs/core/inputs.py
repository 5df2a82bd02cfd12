"""What every lemma proof does: inputs, evaluation, exact comparison, certificate.

A lemma proof builds its construction for the given sizes, evaluates the RASP
graph on the input matrices (random rationals from a seed, or ``--inputs FILE``),
computes the reference straight from the inputs (:mod:`proofs.checkers.references`),
decides exact equality entry by entry in the domain, checks that positions
outside the output block hold what the construction documents (0), and returns
an attncert/1 certificate.
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.layout import Construction
from attncert.exact import EE, AttncertError, Domain, ParseError, domain_from_name
from attncert.exact.certificate import parse_json, read_bounded
from attncert.exact.matrices import Rows, convert_rows, matrix_to_json
from attncert.proofs.core.certify import certificate
from attncert.proofs.core.params import positive_int
from attncert.proofs.core.registry import Param

#: Exact domains a lemma may be proven in (Ball and Float give no exact proof).
EXACT_DOMAINS = ("QQ", "EE")


def size_param(name: str, default: int, help: str) -> Param:
    return Param(name, positive_int, default, help)


SEED = Param("seed", int, 0, "seed of the random rational inputs")
INPUTS = Param("inputs", str, None, "JSON file with the input matrices (rational strings or decimals), instead of random ones")


def exact_domain(name: str) -> Domain:
    if name not in EXACT_DOMAINS:
        raise ParseError(f"a lemma is proven in an exact domain ({', '.join(EXACT_DOMAINS)}), not {name!r}")
    return domain_from_name(name)


#: The seed's rationals p/q have |p| <= RANDOM_HEIGHT and 1 <= q <= RANDOM_DEN.
RANDOM_HEIGHT, RANDOM_DEN = 20, 9


def random_rational(rng: random.Random, height: int = RANDOM_HEIGHT, max_den: int = RANDOM_DEN) -> fmpq:
    return fmpq(rng.randint(-height, height), rng.randint(1, max_den))


def random_rational_values() -> int:
    """How many distinct values :func:`random_rational` takes at its defaults (a softmax row of the seed's scores
    has at most this many distinct exponentials, whatever its length)."""
    return len({fmpq(p, q) for p in range(-RANDOM_HEIGHT, RANDOM_HEIGHT + 1) for q in range(1, RANDOM_DEN + 1)})


def random_value(rng: random.Random, domain: Domain) -> Any:
    """A random rational, or in EE a random a + b e^q whose sign is a genuine question."""
    if domain is EE:
        return EE.convert(random_rational(rng)) + EE.convert(random_rational(rng)) * EE.exp(random_rational(rng, 6, 4))
    return domain.convert(random_rational(rng))


def random_matrix(rng: random.Random, r: int, c: int, domain: Domain) -> Rows:
    return [[random_value(rng, domain) for _ in range(c)] for _ in range(r)]


def read_inputs(path: str) -> dict[str, Any]:
    """The JSON object of an input file, {"NAME": [[...], ...]}, its numbers kept as written (read exactly later)."""
    # The same protections as verify: a regular file, at most the byte limit, bounded nesting and digits.
    try:
        obj = parse_json(read_bounded(path), decimals=True)
    except AttncertError as e:
        raise ParseError(f"inputs {path}: {e}") from None
    if not isinstance(obj, dict):
        raise ParseError(f"inputs {path} must be a JSON object mapping matrix names to lists of rows")
    return obj


def load_inputs(path: str, names: Mapping[str, tuple[int, int]], domain: Domain) -> dict[str, Rows]:
    """Read {"NAME": [[...], ...]} from a JSON file; entries are rational strings, decimals or ints (read exactly).
    The file holds exactly the matrices ``names`` (one more would be silently left out)."""
    obj = read_inputs(path)
    extra = sorted(set(obj) - set(names))
    if extra:
        raise ParseError(f"inputs {path} hold the matrix {extra[0]!r:.40}, which the construction at these sizes does not take (it takes {', '.join(names)})")
    out = {}
    for name, (r, c) in names.items():
        if name not in obj:
            raise ParseError(f"inputs {path} lack the matrix {name!r} ({r}x{c})")
        m = convert_rows(obj[name], domain)
        if (len(m), len(m[0])) != (r, c):
            raise ParseError(f"input {name} must be {r}x{c}, got {len(m)}x{len(m[0])}")
        out[name] = m
    return out


def prove_construction(
    construction: Construction,
    mats: Mapping[str, Rows],
    reference: Rows,
    domain: Domain,
    params: dict[str, Any],
    statement: str,
    seq: list[Any] | None = None,
) -> dict[str, Any]:
    """Evaluate, compare exactly with the reference, and assemble the certificate.

    ``seq``: the construction's output sequence on these inputs, when the caller has it
    already (a verifier that re-ran the same graph); it is then not evaluated again.
    """
    g = construction.graph()
    seq = construction.run(mats, domain, g) if seq is None else seq
    out = construction.layout.decode(seq)
    rest = construction.layout.rest(seq)
    mismatches = [
        {"row": i, "col": j}
        for i, (ro, rr) in enumerate(zip(out, reference))
        for j, (a, b) in enumerate(zip(ro, rr))
        if not domain.eq(a, b)
    ]
    rest_ok = all(domain.sign(v) == 0 for v in rest)
    size = rasp.size(g)
    return certificate(
        claim=construction.name,
        params={**params, "domain": domain.name},
        inputs={name: matrix_to_json(m, domain) for name, m in mats.items()},
        construction={
            "graph": rasp.graph_to_json(g),
            "size": size.to_json(length=construction.layout.length),
            "layout": construction.layout.to_json(),
        },
        outputs={"output": matrix_to_json(out, domain), "rest": [domain.to_json(v) for v in rest]},
        reference={"output": matrix_to_json(reference, domain)},
        result={
            "relation": "exact_equal",
            "holds": not mismatches and rest_ok,
            "domain": domain.name,
            "statement": statement,
            "entries_compared": sum(len(r) for r in out),
            "mismatches": mismatches[:10],
            "rest_is_zero": rest_ok,
        },
    )


def inputs_for(
    seed: int, inputs: str | None, shapes: Mapping[str, tuple[int, int]], domain: Domain, accept: Callable[[dict], bool] = lambda m: True
) -> dict[str, Rows]:
    """The input matrices: from a file, or random from the seed (redrawn until ``accept``)."""
    if inputs:
        return load_inputs(inputs, shapes, domain)
    rng = random.Random(seed)
    while True:
        mats = {name: random_matrix(rng, r, c, domain) for name, (r, c) in shapes.items()}
        if accept(mats):
            return mats
