"""Rebuild a certificate from its recorded parameters and compare the whole document.

The last step of every verification: read each declared parameter of the claim
from ``params`` (refusing missing, unknown or ill-typed ones, with the same
parsers the command line uses), prove the claim again with them, and require
every claim field of the certificate to be exactly its recomputation
(:func:`proofs.core.certify.differing_fields`). Together with a claim's independent
check, which establishes that what the certificate states is true, this pins
every leaf of the document: no field is taken on trust except the informational
``provenance`` and ``side_notes``.

Rebuilding runs the prover, so it imports :mod:`constructions` by design; the
independent checks do not (:mod:`proofs.checkers`).
"""

from __future__ import annotations

from typing import Any, Collection

from attncert.exact import ParseError
from attncert.proofs.core.certify import differing_fields
from attncert.proofs.core.registry import Claim


def recorded_params(claim: Claim, doc: dict[str, Any], optional: Collection[str] = ()) -> dict[str, Any]:
    """The claim's keyword arguments, read from the certificate's params with the declared parsers.

    A parameter named in ``optional``, which its prover records only where it applies, takes its default
    when absent: the whole-document comparison that follows sees any parameter the proof records anew."""
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ParseError('certificate field "params" must be an object')
    declared = {p.name: p for p in claim.params}
    unknown = sorted(set(params) - set(declared))
    if unknown:
        raise ParseError(f"unknown parameter {unknown[0]!r:.40} for claim {claim.name}")
    kwargs = {}
    for name, p in declared.items():
        if name not in params:
            if name not in optional:
                raise ParseError(f"the certificate lacks the parameter {name!r} of claim {claim.name}")
            kwargs[name] = p.default
            continue
        v = params[name]
        if isinstance(v, bool) or not isinstance(v, (int, str)):
            raise ParseError(f"parameter {name} must be an integer or a string")
        kwargs[name] = p.type(str(v))
    return kwargs


def rebuilt_differences(claim: Claim, doc: dict[str, Any]) -> list[str]:
    """Problems for every claim field that differs from proving again with the recorded parameters
    (through ``claim.rebuild`` where the claim reuses a witness its check has re-checked)."""
    expected = claim.rebuild(doc) if claim.rebuild is not None else claim.prove(**recorded_params(claim, doc))
    return differing_fields(doc, expected)

