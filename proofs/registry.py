"""The registry of claims: every provable claim plugs in here, and only here.

The command line (``attncert list``, ``prove``, ``prove-all``) and the verifier
find claims through :data:`CLAIMS`; a claim module registers itself with
:func:`register` when :func:`load_claims` imports it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

#: Modules that define claims. Importing them fills :data:`CLAIMS`.
CLAIM_MODULES: tuple[str, ...] = ()


@dataclass(frozen=True)
class Claim:
    """A provable statement: how to prove it and what it states."""

    name: str
    statement: str
    prove: Callable[..., dict[str, Any]]
    defaults: dict[str, Any] = field(default_factory=dict)


CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.name in CLAIMS:
        raise ValueError(f"claim {claim.name!r} registered twice")
    CLAIMS[claim.name] = claim
    return claim


def load_claims() -> dict[str, Claim]:
    for mod in CLAIM_MODULES:
        importlib.import_module(mod)
    return CLAIMS
