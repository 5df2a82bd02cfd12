"""Texts in certificates and in input files: {"x": [[...], ...], "a": [...]}, read exactly and validated.

Input files (``--texts``, ``--family``) are read as verify reads certificates (a
regular file, bounded size and nesting) with bare decimals kept as strings, so
``0.1`` is exactly 1/10; every text then passes
:func:`constructions.sinkhorn.texts.read_text` (one line and exit 2 on an empty
text, a weight <= 0, weights that do not sum to 1, or a point outside [-1, 1]).
"""

from __future__ import annotations

from typing import Any

from attncert.constructions.sinkhorn.texts import Family, Text, read_text
from attncert.exact import QQ, AttncertError, ParseError
from attncert.exact.certificate import parse_json, read_bounded
from attncert.exact.matrices import matrix_to_json


def text_json(t: Text) -> dict[str, Any]:
    return {"x": matrix_to_json(t.points, QQ), "a": [QQ.to_json(w) for w in t.weights]}


def text_from(obj: Any, name: str) -> Text:
    """A text from its JSON form {"x": points, "a": weights}, validated."""
    if not isinstance(obj, dict) or set(obj) != {"x", "a"}:
        raise ParseError(f'{name} must be an object {{"x": [points], "a": [weights]}}')
    return read_text(obj["x"], obj["a"], name)


def pair_json(pair: tuple[Text, Text]) -> dict[str, Any]:
    return {"mu": text_json(pair[0]), "nu": text_json(pair[1])}


def pair_from(obj: Any, name: str) -> tuple[Text, Text]:
    if not isinstance(obj, dict) or set(obj) != {"mu", "nu"}:
        raise ParseError(f'{name} must be an object {{"mu": text, "nu": text}}')
    return text_from(obj["mu"], f"{name} mu"), text_from(obj["nu"], f"{name} nu")


def family_json(f: Family) -> dict[str, Any]:
    return {"fit": [pair_json(p) for p in f.fit], "held_out": [pair_json(p) for p in f.held_out]}


def family_from(obj: Any, where: str) -> Family:
    """{"fit": [pairs], "held_out": [pairs]} (held_out may be empty); no held-out pair may be a fit pair."""
    if not isinstance(obj, dict) or set(obj) != {"fit", "held_out"} or not isinstance(obj["fit"], list) or not isinstance(obj["held_out"], list):
        raise ParseError(f'{where} must be an object {{"fit": [pairs], "held_out": [pairs]}}')
    if not obj["fit"]:
        raise ParseError(f"{where} has no fit pairs")
    fit = [pair_from(p, f"{where}: fit pair {i}") for i, p in enumerate(obj["fit"])]
    held = [pair_from(p, f"{where}: held-out pair {i}") for i, p in enumerate(obj["held_out"])]
    seen = {(mu.key(), nu.key()) for mu, nu in fit}
    for i, (mu, nu) in enumerate(held):
        if (mu.key(), nu.key()) in seen:
            raise ParseError(f"{where}: held-out pair {i} is also a fit pair; held-out pairs must be unseen")
    return Family(fit, held)


def read_file(path: str) -> Any:
    """A JSON input file, read within the limits, decimals kept exact."""
    try:
        return parse_json(read_bounded(path), decimals=True)
    except AttncertError as e:
        raise ParseError(f"{path}: {e}") from None
