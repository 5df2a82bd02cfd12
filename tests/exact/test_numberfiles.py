"""Numbers from a user's file (exact.numberfiles): each format read exactly, every bad file one ParseError."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from attncert.exact import ParseError
from attncert.exact.limits import Limits, limits
from attncert.exact.numberfiles import is_double, read_matrix, read_vector


def q(x: Fraction | int) -> fmpq:
    x = Fraction(x)
    return fmpq(x.numerator, x.denominator)


def test_json_decimals_fractions_and_integers_are_the_rationals_they_spell(tmp_path):
    path = tmp_path / "C.json"
    path.write_text('[[0.1, "1/3", 2], ["-2.5e-3", 1e2, "0"]]')
    rows, tag = read_matrix(path)
    assert tag == "json"
    assert rows == [[fmpq(1, 10), fmpq(1, 3), fmpq(2)], [fmpq(-1, 400), fmpq(100), fmpq(0)]]
    (tmp_path / "a.json").write_text('[0.25, "3/4"]')
    assert read_vector(tmp_path / "a.json") == ([fmpq(1, 4), fmpq(3, 4)], "json")


def test_csv_rows_columns_and_cells(tmp_path):
    (tmp_path / "C.csv").write_text("0.1, 1/3\n\n2,-7\n")
    assert read_matrix(tmp_path / "C.csv") == ([[fmpq(1, 10), fmpq(1, 3)], [fmpq(2), fmpq(-7)]], "csv")
    (tmp_path / "row.csv").write_text("1/2,1/4,1/4\n")
    (tmp_path / "col.csv").write_text("1/2\n1/4\n1/4\n")
    for name in ("row.csv", "col.csv"):
        assert read_vector(tmp_path / name) == ([fmpq(1, 2), fmpq(1, 4), fmpq(1, 4)], "csv")


def test_npy_floats_are_their_exact_binary_values(tmp_path):
    # The independent value: Python's Fraction of the double (0.1 is 3602879701896397/2^55).
    C = np.array([[0.1, 0.2], [1 / 3, 5.0]])
    np.save(tmp_path / "C.npy", C)
    rows, tag = read_matrix(tmp_path / "C.npy")
    assert tag == "npy-float"
    assert rows == [[q(Fraction(x)) for x in row] for row in C.tolist()]
    assert rows[0][0] == fmpq(3602879701896397, 2**55) != fmpq(1, 10)
    np.save(tmp_path / "a32.npy", np.array([0.1, 0.9], dtype=np.float32))
    a, tag = read_vector(tmp_path / "a32.npy")
    assert tag == "npy-float" and a == [q(Fraction(float(np.float32(0.1)))), q(Fraction(float(np.float32(0.9))))]
    np.save(tmp_path / "b.npy", np.array([[3], [-4]], dtype=np.int64))
    assert read_vector(tmp_path / "b.npy") == ([fmpq(3), fmpq(-4)], "npy-int")


def test_is_double():
    assert is_double(q(Fraction(0.1))) and is_double(fmpq(-3)) and is_double(q(Fraction(5e-324)))
    assert not is_double(fmpq(1, 10)) and not is_double(fmpq(1, 3))
    assert not is_double(fmpq(1, 2**1075))  # below the least subnormal
    assert not is_double(fmpq(2**1024))  # above the largest double
    assert not is_double(fmpq(2**53 + 1))  # an integer a double cannot hold


@pytest.mark.parametrize(
    "name, content, match",
    [
        ("C.json", "[[1, 2], [3]]", "ragged"),
        ("C.json", "[[1, NaN]]", "NaN"),
        ("C.json", '[["1", "inf"]]', "not a finite number"),
        ("C.json", "[[1, true]]", "boolean"),
        ("C.json", "[]", "non-empty"),
        ("C.json", "[[1, 2], 3]", "mixes numbers and rows"),
        ("C.json", "[1, 2, 3]", "a matrix is a list of rows"),
        ("C.json", "[[1, 2]", "malformed JSON"),
        ("C.json", '[["1/0"]]', "zero denominator"),
        ("C.csv", "1,nan\n", "not a finite number"),
        ("C.csv", "1,,2\n", "empty cell"),
        ("C.csv", "1 2\n3 4\n", "not a rational number"),
        ("C.csv", "x,y\n1,2\n", "not a rational number"),
        ("C.txt", "1,2\n", "unknown format"),
        ("C", "1,2\n", "unknown format"),
    ],
)
def test_bad_text_files_are_one_line_naming_the_file(tmp_path, name, content, match):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ParseError, match=match) as e:
        read_matrix(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    "array, match",
    [
        (np.array([[0.0, np.inf]]), "not a finite number"),
        (np.array([[np.nan]]), "not a finite number"),
        (np.array([[True, False]]), "dtype bool"),
        (np.array([[1 + 2j]]), "dtype complex"),
        (np.zeros((2, 2, 2)), "1-D or 2-D"),
        (np.zeros((0, 3)), "non-empty"),
        (np.array([["1/3"]]), "dtype <U3"),
    ],
)
def test_bad_npy_arrays(tmp_path, array, match):
    np.save(tmp_path / "C.npy", array)
    with pytest.raises(ParseError, match=match):
        read_matrix(tmp_path / "C.npy")


def test_pickled_objects_and_archives_are_refused(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([[1, "x"]], dtype=object), allow_pickle=True)
    with pytest.raises(ParseError, match="without pickle"):
        read_matrix(tmp_path / "obj.npy")
    np.savez(tmp_path / "C.npz", C=np.zeros((2, 2)))
    with pytest.raises(ParseError, match="npz archive"):
        read_matrix(tmp_path / "C.npz")
    (tmp_path / "junk.npy").write_bytes(b"not numpy")
    with pytest.raises(ParseError, match=r"junk\.npy: not a \.npy array"):
        read_matrix(tmp_path / "junk.npy")


def test_vectors_and_matrices_keep_their_shapes(tmp_path):
    (tmp_path / "M.json").write_text("[[1, 2], [3, 4]]")
    with pytest.raises(ParseError, match="a vector is one row or one column"):
        read_vector(tmp_path / "M.json")


def test_limits_bound_the_file(tmp_path):
    (tmp_path / "C.json").write_text(json.dumps([[1] * 10] * 10))
    with limits(Limits(max_entries=99)), pytest.raises(ParseError, match="100 numbers, over the limit of 99 entries"):
        read_matrix(tmp_path / "C.json")
    np.save(tmp_path / "C.npy", np.zeros((10, 10)))
    with limits(Limits(max_entries=99)), pytest.raises(ParseError, match="over the limit of 99 entries"):
        read_matrix(tmp_path / "C.npy")
    with limits(Limits(max_bytes=100)), pytest.raises(ParseError, match="over the limit of 100"):
        read_matrix(tmp_path / "C.json")
    (tmp_path / "digits.csv").write_text("1" * 200 + "\n")
    with limits(Limits(max_digits=50)), pytest.raises(ParseError, match="limit of 50 digits"):
        read_vector(tmp_path / "digits.csv")
