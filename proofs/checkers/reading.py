"""Typed reading of certificate fields: a malformed field raises ParseError (verify says BAD)."""

from __future__ import annotations

from typing import Any

from flint import fmpq

from attncert.exact import QQ, ParseError
from attncert.exact.matrices import Rows, matrix_from_json


def obj(parent: Any, key: str) -> dict[str, Any]:
    """parent[key], which must be a JSON object."""
    v = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(v, dict):
        raise ParseError(f'certificate field "{key}" must be an object')
    return v


def items(parent: Any, key: str) -> list[Any]:
    """parent[key], which must be a non-empty JSON list."""
    v = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(v, list) or not v:
        raise ParseError(f'certificate field "{key}" must be a non-empty list')
    return v


def whole(v: Any) -> bool:
    """Whether v is a JSON integer: an int and not a bool (Python's True is the int 1, and equal to it)."""
    return isinstance(v, int) and not isinstance(v, bool)


def integer(parent: Any, key: str, lo: int, hi: int) -> int:
    """parent[key], an integer (not a bool) in [lo, hi]."""
    v = parent.get(key) if isinstance(parent, dict) else None
    if not whole(v) or not lo <= v <= hi:
        raise ParseError(f'certificate field "{key}" must be an integer in [{lo}, {hi}]')
    return v


def flag(parent: Any, key: str) -> bool:
    v = parent.get(key) if isinstance(parent, dict) else None
    if not isinstance(v, bool):
        raise ParseError(f'certificate field "{key}" must be true or false')
    return v


def rational(obj_: Any) -> fmpq:
    return QQ.from_json(obj_)


def qvector(obj_: Any) -> list[fmpq]:
    if not isinstance(obj_, list) or not obj_:
        raise ParseError("expected a non-empty list of rationals")
    return [QQ.from_json(x) for x in obj_]


def qmatrix(obj_: Any) -> Rows:
    return matrix_from_json(obj_, QQ)


def shape_is(M: Rows, rows: int, cols: int, name: str) -> None:
    if len(M) != rows or len(M[0]) != cols:
        raise ParseError(f"{name} must be {rows}x{cols}, the certificate records {len(M)}x{len(M[0])}")
