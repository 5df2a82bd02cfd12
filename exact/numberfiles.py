"""A matrix or a vector of numbers from a user's file, read exactly: JSON, CSV or NumPy's ``.npy``.

The file's name says its format (``.json``, ``.csv``, ``.npy``); every number becomes the exact
rational it denotes, and :data:`FORMATS` says, in the words a certificate records, how:

- **JSON** (``FILE.json``): a list of numbers (a vector) or a list of rows (a matrix). Integers,
  decimals and strings ``"p/q"`` or ``"0.1"``; a bare decimal is kept as its text, so ``0.1`` is
  exactly 1/10 (read as verify reads certificates: :func:`exact.certificate.parse_json`).
- **CSV** (``FILE.csv``): comma-separated cells, one row per line, each an integer, a decimal or
  ``p/q`` (``1/3``); blank lines are skipped. A vector is one row or one column.
- **.npy** (``FILE.npy``, :func:`numpy.load` with ``allow_pickle=False``): integer arrays exactly;
  arrays of binary floats (float16, float32, float64) as each float's exact binary value, a dyadic
  rational (the float 0.1 is 3602879701896397/2^55, not 1/10). A vector is 1-D, or 2-D with one
  row or one column. Other dtypes (bool, complex, object, longdouble) are refused.

NaN and infinities, empty or ragged arrays, unknown suffixes and anything over the limits in force
(:mod:`exact.limits`: the file's bytes, the entries, the digits) raise one :class:`ParseError` that
names the file. A ``.npz`` archive is not one array: it is refused with that line.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
from flint import fmpq

from attncert.exact.certificate import parse_json, read_bounded
from attncert.exact.domains.qq import QQ
from attncert.exact.errors import AttncertError, LimitExceeded, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.matrices import Rows, convert_rows
from attncert.exact.rationals import dyadic_rational

#: How each format's numbers were read, by the tag a certificate records for it.
FORMATS: dict[str, str] = {
    "json": "a JSON file: integers, decimals and p/q strings, each the exact rational it spells",
    "csv": "a CSV file: integers, decimals and p/q, each the exact rational it spells",
    "npy-int": "a .npy file of integers, read exactly",
    "npy-float": "a .npy file of binary floats: each entry is its float's exact binary value (a dyadic rational), not the decimal it prints as",
}

SUFFIXES = (".json", ".csv", ".npy")


def read_matrix(path: str | Path) -> tuple[Rows, str]:
    """(rows of exact rationals, format tag) of a matrix file; ParseError naming the file otherwise."""
    rows, tag = _read(path)
    if isinstance(rows, list) and rows and not isinstance(rows[0], list):
        raise ParseError(f"{path}: a matrix is a list of rows, this file holds one list of {len(rows):,} numbers")
    return rows, tag


def read_vector(path: str | Path) -> tuple[list[fmpq], str]:
    """(entries, format tag) of a vector file: a flat list, or a matrix of one row or one column."""
    rows, tag = _read(path)
    if rows and isinstance(rows[0], list):
        if len(rows) == 1:
            return rows[0], tag
        if all(len(r) == 1 for r in rows):
            return [r[0] for r in rows], tag
        raise ParseError(f"{path}: a vector is one row or one column, this file holds a {len(rows)}x{len(rows[0])} matrix")
    return rows, tag


def is_double(q: fmpq) -> bool:
    """Whether q is exactly the value of a finite binary64 float (what an ``npy-float`` entry must be)."""
    den = int(q.q)
    if den & (den - 1):  # not a power of two
        return False
    try:
        return fmpq(*float(q).as_integer_ratio()) == q
    except OverflowError:
        return False


def _read(path: str | Path) -> tuple[list, str]:
    """A flat list of rationals (a 1-D file) or a rectangular list of rows, and the format tag."""
    suffix = Path(path).suffix.lower()
    if suffix == ".npz":
        raise ParseError(f"{path}: a .npz archive holds several arrays; save the one array as .npy, or write it as .json or .csv")
    if suffix not in SUFFIXES:
        raise ParseError(f"{path}: unknown format {suffix or '(no suffix)'!r}; numbers are read from .json, .csv or .npy files")
    try:
        data = read_bounded(path)
    except AttncertError as e:
        raise type(e)(str(e) if str(path) in str(e) else f"{path}: {e}") from None
    try:
        if suffix == ".npy":
            return _npy(data)
        if suffix == ".json":
            return _nested(parse_json(data, decimals=True)), "json"
        return _nested(_csv_rows(data)), "csv"
    except AttncertError as e:
        raise type(e)(f"{path}: {e}") from None


def _nested(obj: object) -> list:
    """A JSON or CSV value as exact rationals: a non-empty flat list, or a rectangular matrix."""
    if not isinstance(obj, list) or not obj:
        raise ParseError("expected a non-empty list of numbers, or of rows")
    _check_entries(sum(len(r) if isinstance(r, list) else 1 for r in obj))
    if all(isinstance(r, list) for r in obj):
        return convert_rows(obj, QQ)
    if any(isinstance(r, list) for r in obj):
        raise ParseError("a list that mixes numbers and rows")
    return convert_rows([obj], QQ)[0]


def _csv_rows(data: bytes) -> list[list[str]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ParseError(f"not UTF-8: {e.reason} at byte {e.start}") from None
    rows = []
    for line, cells in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [c.strip() for c in cells]
        if not any(cells):
            continue
        if not all(cells):
            raise ParseError(f"line {line} has an empty cell")
        rows.append(cells)
    return rows


def _npy(data: bytes) -> tuple[list, str]:
    try:
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise ParseError(f"not a .npy array NumPy reads without pickle ({str(e).splitlines()[0][:100]})") from None
    if not isinstance(arr, np.ndarray):
        raise ParseError("not a single .npy array")
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ParseError(f"expected a non-empty 1-D or 2-D array, got shape {arr.shape}")
    _check_entries(arr.size)
    kind = arr.dtype.kind
    if kind in "iu":
        values, tag = arr.tolist(), "npy-int"
        convert = fmpq
    elif kind == "f" and arr.dtype.itemsize <= 8:
        bad = np.argwhere(~np.isfinite(arr))
        if len(bad):
            raise ParseError(f"entry {tuple(int(i) for i in bad[0])} is {arr[tuple(bad[0])]}, not a finite number")
        values, tag = arr.tolist(), "npy-float"
        convert = dyadic_rational
    else:
        raise ParseError(f"arrays of dtype {arr.dtype} are not read; save integers or float16/32/64, or write exact numbers as .json or .csv")
    if arr.ndim == 1:
        return [convert(x) for x in values], tag
    return [[convert(x) for x in row] for row in values], tag


def _check_entries(count: int) -> None:
    most = current_limits().max_entries
    if count > most:
        raise LimitExceeded(f"{count:,} numbers, over the limit of {most:,} entries (raise it with --max-entries)")
