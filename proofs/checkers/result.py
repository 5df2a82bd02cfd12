"""The one conclusion every claim check ends with: the recorded relation and ``holds`` against the check."""

from __future__ import annotations

from typing import Any

from attncert.proofs.checkers.reading import obj


def conclude(doc: dict[str, Any], relation: str, problems: list[str]) -> list[str]:
    """The recorded result must say the claim's relation and holds = (no problem was found)."""
    result = obj(doc, "result")
    if result.get("relation") != relation:
        problems.append(f"the relation of this claim is {relation!r}, the certificate says {result.get('relation')!r:.30}")
    holds = not problems
    if result.get("holds") is not holds:
        problems.append(f"the recorded result says holds={result.get('holds')!r:.10}, the check says {holds}")
    return problems
