"""The one conclusion every claim check ends with: the recorded relation and ``holds`` against the check."""

from __future__ import annotations

from typing import Any, Sequence

from attncert.proofs.checkers.reading import obj


def conclude(doc: dict[str, Any], relation: str, problems: list[str], failures: Sequence[str] = ()) -> list[str]:
    """The problems of the document: the recorded result must say the claim's relation, and holds exactly
    when the check found neither a problem nor a failure.

    ``problems`` are recorded values that are not what the check recomputes (the document does not check);
    ``failures`` are why the claim itself, recomputed, does not hold (a stated bound violated, no beta
    within tol). A document that records ``holds: false`` with a failure the check confirms has no
    problem: it is a genuine certificate of a claim that does not hold (verify's DOES-NOT-HOLD). One that
    records ``holds: true`` has each failure as a problem."""
    result = obj(doc, "result")
    if result.get("relation") != relation:
        problems.append(f"the relation of this claim is {relation!r}, the certificate says {result.get('relation')!r:.30}")
    holds = not problems and not failures
    if result.get("holds") is True and failures:
        problems.extend(failures)
    elif result.get("holds") is not holds:
        problems.append(f"the recorded result says holds={result.get('holds')!r:.10}, the check says {holds}")
    return problems
