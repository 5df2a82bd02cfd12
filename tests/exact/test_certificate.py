"""The certificate container: sealing, atomic writes and hash checks on read."""

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attncert.exact.certificate import (
    FORMAT,
    check_document,
    check_target,
    parse_document,
    read_certificate,
    seal,
    write_certificate,
)
from attncert.exact.canonical import canonical_json
from attncert.exact.errors import CertificateError, LimitExceeded, OutputError, ParseError
from attncert.exact.limits import Limits, limits


def _doc():
    return {
        "format": FORMAT,
        "claim": "example",
        "params": {"n": 2},
        "inputs": {"X": [["1/2", "3"]]},
        "construction": {"graph": {}, "size": {}},
        "outputs": {"U": [["1/2", "3"]]},
        "reference": {"T": [["1/2", "3"]]},
        "result": {"relation": "exact_equal", "holds": True},
        "provenance": {"attncert": "0.1.0"},
    }


def test_write_then_read(tmp_path):
    p = write_certificate(tmp_path / "sub" / "c.json", _doc(), create_folder=True)  # one new folder, as for certificates/
    doc = read_certificate(p)
    assert doc["sha256"] == seal(_doc())["sha256"]
    assert p.read_bytes() == canonical_json(seal(_doc())) + b"\n"
    assert [f.name for f in p.parent.iterdir()] == ["c.json"]  # no temporary file left
    umask = os.umask(0)
    os.umask(umask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~umask  # readable by others, as the umask allows


def test_a_missing_folder_is_refused_and_never_made(tmp_path):
    for path in (tmp_path / "sub" / "c.json", tmp_path / "a" / "b" / "c.json"):
        with pytest.raises(OutputError, match="no such folder"):
            check_target(path)
        with pytest.raises(OutputError, match="No such file or directory"):
            write_certificate(path, _doc())
    with pytest.raises(OutputError, match="no such folder"):
        check_target(tmp_path / "a" / "b" / "c.json", create_folder=True)  # only one level is ever made
    with pytest.raises(OutputError, match="No such file or directory"):
        write_certificate(tmp_path / "a" / "b" / "c.json", _doc(), create_folder=True)
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_keeps_old_file_on_failure(tmp_path, monkeypatch):
    p = write_certificate(tmp_path / "c.json", _doc())
    before = p.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OutputError, match="cannot write .*c.json: disk full"):
        write_certificate(p, {**_doc(), "claim": "other"})
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["c.json"]


@pytest.mark.parametrize("where", ["fsync", "close"])
def test_a_signal_mid_write_leaves_no_file_behind(tmp_path, monkeypatch, where):
    """Ctrl-C (or SIGTERM, raised as an exception) inside the write or the folder probe strands nothing."""
    p = write_certificate(tmp_path / "c.json", _doc())
    before = p.read_bytes()

    def interrupt(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, where, interrupt)
    with pytest.raises(KeyboardInterrupt):
        if where == "fsync":
            write_certificate(p, {**_doc(), "claim": "other"})
        else:
            check_target(tmp_path / "new.json")  # the probe file is closed, then removed
    monkeypatch.undo()
    assert p.read_bytes() == before
    assert [f.name for f in tmp_path.iterdir()] == ["c.json"]


def test_tampering_is_caught_by_the_hash(tmp_path):
    p = write_certificate(tmp_path / "c.json", _doc())
    doc = json.loads(p.read_text())
    doc["outputs"]["U"][0][0] = "1/3"
    p.write_bytes(canonical_json(doc))
    with pytest.raises(CertificateError, match="sha256 mismatch"):
        read_certificate(p)


def test_the_hash_is_checked_from_the_bytes_as_from_the_document(tmp_path):
    """read_certificate hashes the body's prefix of the bytes it has checked canonical when "sha256" is the
    last field, and the re-encoded body otherwise: both refuse a forged hash and accept a sealed one."""
    p = write_certificate(tmp_path / "c.json", _doc())
    doc = json.loads(p.read_text())
    for forged in ({**doc, "sha256": doc["sha256"].upper()}, {**doc, "sha256": doc["sha256"] + "0"}, {**doc, "zz": 1}):
        p.write_bytes(canonical_json(forged))
        with pytest.raises(CertificateError, match="sha256 mismatch"):
            read_certificate(p)
    after = seal({**doc, "zz": 1})  # a field after "sha256": the body is encoded again
    p.write_bytes(canonical_json(after))
    assert read_certificate(p) == after


@pytest.mark.parametrize(
    "text, exc",
    [
        (b'{"format": "attncert/1"', ParseError),
        (b"[1, 2]", CertificateError),
        (b'{"a": NaN}', ParseError),
        (b'{"a": 0.5}', ParseError),
        (b"[" * 10_000 + b"]" * 10_000, LimitExceeded),
        (b'{"a": ' + b"9" * 1_000_000 + b"}", ParseError),
        (b"\xff\xfe", ParseError),
    ],
)
def test_hostile_documents_give_clear_errors(text, exc):
    with pytest.raises(exc):
        parse_document(text)


def test_brackets_inside_strings_do_not_count_as_nesting():
    doc = parse_document(json.dumps({"s": "[" * 1000 + '\\"{'}).encode())
    assert doc["s"].startswith("[[")


def test_size_limit_and_missing_fields(tmp_path):
    p = write_certificate(tmp_path / "c.json", _doc())
    with limits(Limits(max_bytes=10)), pytest.raises(LimitExceeded):
        read_certificate(p)
    with pytest.raises(CertificateError, match="lacks"):
        check_document({"format": FORMAT})
    with pytest.raises(CertificateError, match="unsupported format"):
        check_document({**seal(_doc()), "format": "attncert/2"})
    with pytest.raises(CertificateError, match="cannot read"):
        read_certificate(tmp_path / "missing.json")


def _depth_by_hand(data: bytes) -> int:
    """The documented rule, one character at a time: a quote after an odd run of backslashes does not
    open or close a string (in valid JSON backslashes only occur inside strings, where this is JSON's rule)."""
    inside, run, depth, deepest = False, 0, 0, 0
    for c in data.decode("utf-8"):
        if c == '"' and run % 2 == 0:
            inside = not inside
        elif not inside and c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif not inside and c in "]}":
            depth -= 1
        run = run + 1 if c == "\\" else 0
    return deepest


@given(st.text(alphabet='[]{}"\\ab', max_size=300), st.integers(1, 17))
def test_the_chunked_nesting_scan_agrees_with_a_character_loop(text, chunk):
    import attncert.exact.certificate as cert

    old = cert.SCAN_CHUNK
    cert.SCAN_CHUNK = chunk  # tiny chunks exercise the state carried across chunk borders
    try:
        assert cert._max_bracket_depth(text.encode()) == _depth_by_hand(text.encode())
    finally:
        cert.SCAN_CHUNK = old
