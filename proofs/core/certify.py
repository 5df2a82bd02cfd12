"""Assembling certificate documents (docs/design.md, "Certificates", format attncert/1).

Proof scripts call :func:`certificate` with what they built and compared; the
container in :mod:`exact.certificate` seals and writes it.
"""

from __future__ import annotations

import functools
import platform
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from attncert.exact.canonical import json_equal
from attncert.exact.certificate import FORMAT

RELATIONS = ("exact_equal", "identity", "enclosure", "bound", "agreement")


@functools.lru_cache(maxsize=1)
def package_version() -> str:
    try:
        return version("attncert")
    except PackageNotFoundError:
        return "0+unknown"


def certificate(
    claim: str,
    params: dict[str, Any],
    inputs: dict[str, Any],
    construction: dict[str, Any],
    outputs: dict[str, Any],
    reference: dict[str, Any],
    result: dict[str, Any],
    side_notes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An unsealed attncert/1 document. ``result`` must give ``relation`` and ``holds``.

    ``side_notes``: float agreement checks with optional packages (POT), each with the
    package's version; informational like ``provenance`` (hashed, never compared).
    """
    if result.get("relation") not in RELATIONS:
        raise ValueError(f"unknown relation {result.get('relation')!r}; expected one of {RELATIONS}")
    if not isinstance(result.get("holds"), bool):
        raise ValueError("result.holds must be a bool")
    doc = {
        "format": FORMAT,
        "claim": claim,
        "params": params,
        "inputs": inputs,
        "construction": construction,
        "outputs": outputs,
        "reference": reference,
        "result": result,
        "provenance": {
            "attncert": package_version(),
            "python": platform.python_version(),
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    }
    if side_notes is not None:
        doc["side_notes"] = side_notes
    return doc


#: Fields a verifier recomputes; the informational fields and the hash are not part of the claim.
CLAIM_FIELDS = ("format", "claim", "params", "inputs", "construction", "outputs", "reference", "result")
#: Covered by the hash, never compared with a recomputation, never part of what decides the verdict
#: (``side_notes`` is optional: float agreement with optional packages, which may be absent or differ).
INFORMATIONAL_FIELDS = ("provenance", "side_notes")


def differing_fields(doc: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Problems for every claim field of ``doc`` that is not exactly its recomputation, as JSON values
    (:func:`exact.canonical.json_equal`: ``true`` is not ``1``)."""
    return [
        difference(doc.get(k), expected.get(k), k)
        for k in CLAIM_FIELDS
        if not json_equal(doc.get(k), expected.get(k))
    ] + [f'unexpected field "{k}"' for k in doc if k not in CLAIM_FIELDS + INFORMATIONAL_FIELDS + ("sha256",)]


def difference(recorded: Any, recomputed: Any, path: str) -> str:
    """One line naming the deepest member or element where two JSON values that are not equal differ
    (``reference.w1_independent_vs_pi.value``, ``outputs.steps[1]``), or a member only one of them has."""
    while True:
        step = None
        if isinstance(recorded, dict) and isinstance(recomputed, dict):
            extra = [k for k in recorded if k not in recomputed]
            missing = [k for k in recomputed if k not in recorded]
            if extra or missing:
                what = f"{extra[0]!r:.40} is not in the recomputation" if extra else f"it lacks {missing[0]!r:.40}"
                return f'the field "{path}" differs from its recomputation: {what}'
            step = next((k for k in recorded if not json_equal(recorded[k], recomputed[k])), None)
            label = f".{step}"
        elif isinstance(recorded, list) and isinstance(recomputed, list) and len(recorded) == len(recomputed):
            step = next((i for i, (x, y) in enumerate(zip(recorded, recomputed)) if not json_equal(x, y)), None)
            label = f"[{step}]"
        if step is None:
            return f'the field "{path}" differs from its recomputation'
        recorded, recomputed, path = recorded[step], recomputed[step], path + label
