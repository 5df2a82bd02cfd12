"""Matrices as lists of rows, with explicit conversions between storage forms.

Following sympy's ``polys/matrices``, the element domain (a :class:`Domain`),
the storage (row lists of domain elements, or FLINT's ``fmpq_mat`` for QQ) and
the API are kept apart, and every conversion is a named function. JSON stores a
matrix as a list of rows (docs/design.md, "Certificates").
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from flint import fmpq_mat

from attncert.exact.domains.base import Domain
from attncert.exact.errors import LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.rationals import refuse_float_array

Rows = list[list[Any]]


def convert_rows(rows: Sequence[Sequence[object]], domain: Domain) -> Rows:
    """Convert a rectangular nested sequence of numbers into domain elements.

    In an exact domain a numpy array of floats (the matrix or one of its rows) is
    refused with :class:`exact.errors.FloatRefused`, as is every float entry.
    """
    if domain.exact and isinstance(rows, np.ndarray):
        refuse_float_array(rows, where=domain.name)
    if not isinstance(rows, Sequence) or isinstance(rows, (str, bytes)):
        raise ParseError(f"a matrix must be a list of rows, got {type(rows).__name__}")
    if not rows:
        raise ParseError("a matrix must have at least one row")
    width = None
    out: Rows = []
    for i, row in enumerate(rows):
        if domain.exact and isinstance(row, np.ndarray):
            refuse_float_array(row, where=domain.name)
        if not isinstance(row, Sequence) or isinstance(row, (str, bytes)):
            raise ParseError(f"matrix row {i} is not a list")
        if width is None:
            width = len(row)
            if width == 0:
                raise ParseError("a matrix must have at least one column")
        elif len(row) != width:
            raise ParseError(f"matrix is ragged: row 0 has {width} entries, row {i} has {len(row)}")
        out.append([domain.convert(x) for x in row])
    return out


def shape(rows: Rows) -> tuple[int, int]:
    return len(rows), len(rows[0])


def to_fmpq_mat(rows: Rows) -> fmpq_mat:
    """QQ rows -> FLINT matrix (for fast exact products and inverses)."""
    shape(rows)  # at least one row
    return fmpq_mat(rows)  # FLINT reads the rows itself: faster than a flattened copy


def from_fmpq_mat(m: fmpq_mat) -> Rows:
    return [list(row) for row in m.table()]


def matrix_to_json(rows: Rows, domain: Domain) -> list[list[Any]]:
    return [[domain.to_json(x) for x in row] for row in rows]


def matrix_from_json(obj: Any, domain: Domain) -> Rows:
    """Read a JSON matrix (list of rows of element JSON) in the given domain, within the limits in force."""
    max_entries = current_limits().max_entries
    if not isinstance(obj, list) or not obj or not all(isinstance(r, list) for r in obj):
        raise ParseError("a matrix must be a non-empty list of rows (lists)")
    n = sum(len(r) for r in obj)
    if n > max_entries:
        raise LimitExceeded(f"matrix of {n:,} entries, over the limit of {max_entries:,} (raise it with --max-entries)")
    width = len(obj[0])
    if width == 0 or any(len(r) != width for r in obj):
        raise ParseError("a matrix must be rectangular with at least one column")
    return [[domain.from_json(x) for x in row] for row in obj]

