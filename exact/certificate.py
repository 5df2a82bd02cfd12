"""The certificate container: documents of format ``attncert/1``.

A certificate is one JSON object (docs/design.md, "Certificates") whose ``sha256``
field is the hex sha256 of the canonical JSON of the rest. This module seals,
writes (atomically: temporary file in the same folder, fsync, then rename) and
reads documents, checking size limits, the format tag and the hash. It knows
nothing about what a claim means; :mod:`proofs.core.verify` checks that.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from attncert.exact.canonical import canonical_json, sha256_hex
from attncert.exact.domains import EE, QQ
from attncert.exact.errors import CertificateError, LimitExceeded, OutputError, ParseError
from attncert.exact.limits import current as current_limits
from attncert.exact.matrices import matrix_from_json

FORMAT = "attncert/1"
REQUIRED_FIELDS = ("format", "claim", "params", "inputs", "construction", "outputs", "reference", "result", "provenance")


def seal(doc: dict[str, Any]) -> dict[str, Any]:
    """Return a copy of doc with its ``sha256`` field set (any old one is replaced)."""
    body = {k: v for k, v in doc.items() if k != "sha256"}
    return {**body, "sha256": sha256_hex(body)}


def check_target(path: str | os.PathLike, create_folder: bool = False) -> None:
    """Refuse, before any work is done, an output that is not a regular file or a new name in a writable folder.

    The atomic rename would replace whatever the name points at: a device node
    (``/dev/null``), a symbolic link, a FIFO. Those are refused, as are folders,
    names under a file, names that are too long, names in a folder that does not
    exist (``create_folder``: one new folder in an existing one is allowed, the
    caller's default output folder), and folders where no file can be created
    (probed by creating and removing a temporary file: permissions alone do not
    tell, e.g. for root or on /proc).
    """
    path = Path(path)
    _refuse_special(path)
    check_folder(path.parent, create_folder)


def _refuse_special(path: Path) -> None:
    """Refuse a path that exists and is not a regular file (the rename would replace it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = "a folder" if stat.S_ISDIR(st.st_mode) else "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a device, pipe or socket"
        raise OutputError(f"refusing to write {path}: it is {kind}, not a regular file")


def check_folder(folder: str | os.PathLike, create: bool = False) -> None:
    """A folder that exists and takes a new file; with ``create``, also a new folder in an existing one
    that takes a new file (a default output folder, made when the first output is written). Missing
    folders above it are refused, never made: a mistyped path must not grow a tree of folders."""
    folder = Path(os.path.abspath(folder))
    existing = next(p for p in (folder, *folder.parents) if os.path.lexists(p))
    if not existing.is_dir():
        raise OutputError(f"cannot write in {folder}: {existing} is not a folder")
    if existing != folder and not (create and existing == folder.parent):
        raise OutputError(f"cannot write in {folder}: no such folder (attncert makes only its default output folders; create it first)")
    probe = None
    try:
        fd, probe = tempfile.mkstemp(prefix=".attncert-probe.", dir=existing)
        os.close(fd)
    except OSError as e:
        raise OutputError(f"cannot write in {existing}: {e.strerror}") from None
    finally:
        # Also on Ctrl-C or SIGTERM (raised as exceptions): a stopped run leaves no probe behind.
        if probe is not None:
            Path(probe).unlink(missing_ok=True)


def atomic_write_bytes(path: str | os.PathLike, data: bytes, create_folder: bool = False) -> Path:
    """Write data to path so that readers see either the old file or the whole new one.

    The folder must exist; ``create_folder`` makes it if it does not (one level: a default
    output folder in an existing one, as :func:`check_target` allowed).

    Every OSError (full disk, permissions, a name too long) becomes one OutputError
    naming the path; the old file, if any, is left as it was. The temporary file is
    itself the test that the folder takes a file (no separate probe, which a signal
    could strand), and it is removed on every way out but success, Ctrl-C included.
    """
    path = Path(path)
    _refuse_special(path)
    tmp = None
    try:
        if create_folder:
            path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a certificate is for others to read
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError):
            raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
        raise
    return path


def certificate_bytes(doc: dict[str, Any]) -> bytes:
    """A sealed certificate in its canonical bytes (the only bytes verify accepts), newline-terminated;
    LimitExceeded, as verify would say it, if it holds a value over the limits in force.

    The same bytes as ``canonical_json(seal(doc))``, encoding the document once: when
    "sha256" sorts after every other field (as it does after all of a certificate's),
    the sealed document's canonical JSON is the body's with that field appended.
    """
    if doc.get("format") != FORMAT:
        raise CertificateError(f"refusing to write a document whose format is not {FORMAT!r}")
    body = {k: v for k, v in doc.items() if k != "sha256"}
    if not all(k < "sha256" for k in body):
        data = canonical_json(seal(doc)) + b"\n"
    else:
        data = canonical_json(body)
        data = data[:-1] + b',"sha256":"' + hashlib.sha256(data).hexdigest().encode() + b'"}\n'
    check_within_limits(body, data)  # what verify will refuse at these limits is not written
    return data


def write_certificate(path: str | os.PathLike, doc: dict[str, Any], create_folder: bool = False) -> Path:
    """Seal and write a certificate atomically, as canonical JSON (in an existing folder, unless ``create_folder``)."""
    return atomic_write_bytes(path, certificate_bytes(doc), create_folder)


def parse_document(data: bytes) -> dict[str, Any]:
    """Parse bytes into a JSON object, refusing NaN/Infinity, floats, oversize and over-deep input."""
    doc = parse_json(data)
    if not isinstance(doc, dict):
        raise CertificateError(f"a certificate must be a JSON object, got {type(doc).__name__}")
    return doc


def parse_json(data: bytes, decimals: bool = False) -> Any:
    """Parse untrusted JSON within the limits in force: size, UTF-8, nesting (scanned before parsing, in
    bounded memory), integer digits, no NaN/Infinity, no duplicate keys. JSON floats are refused, or with
    ``decimals`` kept as their exact decimal text (for user input files, where 0.1 means 1/10)."""
    limits = current_limits()
    if len(data) > limits.max_bytes:
        raise LimitExceeded(_too_large(len(data), limits.max_bytes))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ParseError(f"document is not UTF-8: {e.reason} at byte {e.start}") from None
    if _max_bracket_depth(data) > limits.max_depth:
        raise LimitExceeded(f"document nested deeper than {limits.max_depth} levels")
    try:
        doc = json.loads(
            text, parse_constant=_refuse_constant, parse_float=str if decimals else _refuse_float, object_pairs_hook=_refuse_duplicates
        )
    except ParseError:
        raise
    except json.JSONDecodeError as e:
        raise ParseError(f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except (ValueError, RecursionError) as e:  # e.g. an integer literal over Python's digit limit
        raise ParseError(f"malformed JSON: {str(e).splitlines()[0][:120]}") from None
    return doc


def check_within_limits(doc: Any, data: bytes) -> None:
    """Refuse a document (``data`` its bytes) that holds a value over the limits in force, with the line the
    reader of that value gives: its size, an EE sum with too many terms or too large an exponent, a matrix
    with too many entries (docs/limits.md).

    Verify runs this on every file it reads, before any checker; prove on the bytes it is about to write.
    So a certificate prove writes is one verify reads at the same limits, and one it would refuse is
    refused by prove, with the same line. (Digits are the writer's: rational_to_json refuses a rational
    over the digit limit with the reader's line, since only the reader knows which digit strings are
    numbers: match2 records its readouts as texts of 0s and 1s.) One walk over the containers counts
    terms and entries; exponents are found in the bytes; a reader runs only on a value that may be over.
    """
    lim = current_limits()
    if len(data) > lim.max_bytes:
        raise LimitExceeded(_too_large(len(data), lim.max_bytes))
    # In the bytes: a pair ["p/q", ...] (an EE term c e^(p/q)) whose p has at least k more digits than q, as
    # |p/q| > max_exponent >= 10^k needs (|p| > 10^k q); only then are EE elements' exponents looked at.
    k = len(str(lim.max_exponent)) - 1
    exponents = b'"num":' in data and any(
        len(p) - len(q) >= k for p, q in re.findall(rb'\["-?([0-9]{%d,})(?:/([0-9]+))?"' % (k + 1), data)
    )
    # EE elements are counted here and not entered: their terms are many and small.
    stack = [doc]
    while stack:
        v = stack.pop()
        if type(v) is dict:
            if v.keys() != _EE_KEYS:
                stack.extend(v.values())
            elif type(v["num"]) is list and type(v["den"]) is list and (
                max(len(v["num"]), len(v["den"])) > lim.max_terms or exponents and _exponent_digits(v) >= k
            ):
                _read_ee(v)
        elif type(v) is list and v and not _LEAF_TYPES.issuperset(map(type, v)):
            if _matrix_like(v) and sum(map(len, v)) > lim.max_entries:
                matrix_from_json(v, QQ)  # refuses the count before reading an entry
            stack.extend(v)


def _read_ee(v: dict[str, Any]) -> None:
    """EE's reader on what looks like an EE element: its LimitExceeded, as verify's checkers would raise it."""
    try:
        EE.from_json(v)
    except LimitExceeded:
        raise
    except ParseError:
        pass  # not an EE element, or a malformed one: the checker that reads it says so


def _exponent_digits(v: dict[str, Any]) -> int:
    """The most digits an exponent p/q of an EE element has in p beyond those in q (-1 without exponents)."""
    return max((_integer_digits(t[0]) for t in (*v["num"], *v["den"]) if type(t) is list and t and type(t[0]) is str), default=-1)


def _matrix_like(v: list[Any]) -> bool:
    """Rows of numbers as certificates write them: lists whose first entry is a rational string or an EE or ball
    object (lists of integers, such as a partition's leaves, are other data)."""
    return type(v[0]) is list and bool(v[0]) and type(v[0][0]) in (str, dict) and all(type(r) is list for r in v)


def _integer_digits(s: str) -> int:
    """For a rational "p/q": the digits of p less the digits of q."""
    num, _, den = s.partition("/")
    return len(num) - num.startswith("-") - len(den)


_EE_KEYS = {"num": None, "den": None}.keys()
#: Leaves of a JSON document.
_LEAF_TYPES = frozenset({str, int, bool, type(None)})


def load_certificate_bytes(data: bytes) -> dict[str, Any]:
    """Parse a certificate and check its hash, refusing any bytes but its canonical serialisation.

    Only ``canonical_json(doc)``, optionally followed by one newline, is accepted:
    then the bytes a reader sees and the document verify checks are the same
    (no duplicate keys, no reordering, no escapes that display differently).
    """
    doc = parse_document(data)
    if data not in (canonical := canonical_json(doc), canonical + b"\n"):
        raise ParseError("the document is not in canonical form (sorted keys, no whitespace, as attncert writes it)")
    check_document(doc, canonical)
    check_within_limits(doc, data)
    return doc


def check_document(doc: dict[str, Any], canonical: bytes | None = None) -> None:
    """Check the format tag, the presence of every field, and the sha256.

    ``canonical``, if given, is ``canonical_json(doc)``: when "sha256" sorts after every other field, the
    body's canonical JSON is its prefix with the closing brace put back (as :func:`certificate_bytes`
    forms it), and the document is not encoded a second time.
    """
    fmt = doc.get("format")
    if fmt != FORMAT:
        raise CertificateError(f"unsupported format {fmt!r:.40}: expected {FORMAT!r}")
    missing = [k for k in REQUIRED_FIELDS + ("sha256",) if k not in doc]
    if missing:
        raise CertificateError(f"certificate lacks the field(s) {', '.join(missing)}")
    recorded = doc["sha256"]
    if not isinstance(recorded, str):
        raise CertificateError("the sha256 field must be a hex string")
    tail = b',"sha256":' + json.dumps(recorded, ensure_ascii=False).encode() + b"}"
    if canonical is not None and canonical.endswith(tail) and all(k < "sha256" for k in doc if k != "sha256"):
        actual = hashlib.sha256(canonical[: -len(tail)] + b"}").hexdigest()
    else:
        actual = sha256_hex({k: v for k, v in doc.items() if k != "sha256"})
    if recorded != actual:
        raise CertificateError(f"sha256 mismatch: recorded {recorded[:16]}..., computed {actual[:16]}...")


def read_certificate(path: str | os.PathLike) -> dict[str, Any]:
    """Read, parse and hash-check a certificate file, within the limits in force."""
    return load_certificate_bytes(read_bounded(path))


def read_bounded(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file, reading at most the byte limit plus one (devices and pipes are refused)."""
    limits = current_limits()
    path = Path(path)
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise CertificateError(f"cannot read {path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise CertificateError(f"cannot read {path}: not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = _read_up_to(f, limits.max_bytes + 1, st.st_size)
    except OSError as e:
        raise CertificateError(f"cannot read {path}: {e.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limits.max_bytes:
        raise LimitExceeded(f"{path}: {_too_large(max(st.st_size, len(data)), limits.max_bytes)}")
    return data


def _too_large(size: int, max_bytes: int) -> str:
    return f"document of {size:,} bytes, over the limit of {max_bytes:,} (raise it with --max-bytes)"


def _read_up_to(f: Any, most: int, size: int) -> bytes:
    """At most ``most`` bytes of f: the file's stated size (plus one, to see it grow) in one read, then
    1 MiB at a time. A read of n bytes allocates n at once, so the limit itself is never asked for."""
    parts = [f.read(min(most, size + 1))]
    got = len(parts[0])
    while got < most and parts[-1]:
        parts.append(f.read(min(most - got, 1 << 20)))
        got += len(parts[-1])
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ParseError(f"duplicate key {dup!r:.40} in a JSON object: a certificate names each field once")
    return obj


def _refuse_constant(name: str) -> Any:
    raise ParseError(f"JSON constant {name} is not allowed in a certificate")


def _refuse_float(text: str) -> Any:
    raise ParseError(f"JSON float {text[:40]} is not allowed in a certificate; numbers are rational strings")


#: Bytes scanned at a time by the nesting scan: its memory is a few times this, whatever the document's size.
SCAN_CHUNK = 1 << 20


def _max_bracket_depth(data: bytes) -> int:
    """The deepest nesting of [ and { outside JSON strings, scanned in chunks of SCAN_CHUNK bytes.

    Measured before json.loads so that hostile nesting never reaches the recursive
    parser. A quote opens or closes a string unless an odd run of backslashes
    precedes it. Vectorised per chunk; the state carried between chunks is
    (inside a string, trailing backslashes, depth), so memory stays bounded.
    """
    inside, run, depth, deepest = 0, 0, 0, 0
    for start in range(0, len(data), SCAN_CHUNK):
        b = np.frombuffer(data, dtype=np.uint8, count=min(SCAN_CHUNK, len(data) - start), offset=start)
        idx = np.arange(len(b), dtype=np.int64)
        backslash = b == 0x5C
        # last position <= i that is not a backslash (-1 - run when the chunk opens with a carried run)
        last_plain = np.maximum.accumulate(np.where(backslash, -1 - run, idx))
        before = np.empty(len(b), dtype=np.int64)  # backslashes right before position i
        before[0] = run
        before[1:] = idx[:-1] - last_plain[:-1]
        quote = (b == 0x22) & (before % 2 == 0)
        state = (inside + np.cumsum(quote)) % 2  # 1 inside a string after position i (quotes flip it)
        outside = state == 0
        step = (((b == 0x5B) | (b == 0x7B)) & outside).astype(np.int64) - (((b == 0x5D) | (b == 0x7D)) & outside).astype(np.int64)
        levels = depth + np.cumsum(step)
        deepest = max(deepest, int(levels.max(initial=depth)))
        depth, inside = int(levels[-1]), int(state[-1])
        run = int(idx[-1] - last_plain[-1])
    return deepest
