"""The CLI under careless and hostile use: each invocation is refused with exit 2 and one line,
no traceback, within seconds and 2 GiB of address space, and leaves the file system as it was (no file created, existing
files byte-identical, a FIFO still a FIFO, a symlink still a symlink).

Run as subprocesses in a scratch folder that holds an existing certificate, a regular file, a
FIFO, a symlink to the FIFO and (when not root) a read-only folder.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.core.certify import certificate

ROOT = os.geteuid() == 0
LONG = "x" * 300 + ".json"

CASES: list[tuple[str, list[str]]] = [
    # output targets, checked before any work
    ("out is an existing folder", ["prove", "relu", "--out", "folder"]),
    ("out is .", ["prove", "relu", "--out", "."]),
    ("out under a regular file", ["prove", "relu", "--out", "afile/c.json"]),
    ("out name too long", ["prove", "relu", "--out", LONG]),
    ("out is /proc/version", ["prove", "relu", "--out", "/proc/version"]),
    ("out in /proc", ["prove", "relu", "--out", "/proc/attncert-test.json"]),
    ("out is a FIFO", ["prove", "relu", "--out", "fifo"]),
    ("out is a symlink to a FIFO", ["prove", "relu", "--out", "link"]),
    ("graph out is a FIFO", ["graph", "relu", "--out", "fifo"]),
    ("graph png is a symlink", ["graph", "relu", "--png", "link"]),
    ("prove-all out-dir is a file", ["prove-all", "--out-dir", "afile"]),
    ("sweep out-dir is a file", ["sweep", "relu", "--out-dir", "afile"]),
    ("sweep out-dir in /proc", ["sweep", "relu", "--out-dir", "/proc/attncert-sweep"]),
    ("bad size keeps the old file", ["prove", "relu", "--n", "0", "--out", "keep.json"]),
    # sizes, refused by the cost model before building
    ("universal n=1000", ["prove", "universal", "--n", "1000"]),
    ("universal n=100000", ["prove", "universal", "--n", "100000"]),
    ("matmul 1000^3", ["prove", "matmul", "--r", "1000", "--k", "1000", "--c", "1000"]),
    ("relu n=10^9", ["prove", "relu", "--n", "1000000000"]),
    ("match2 length 100", ["prove", "match2", "--max-length", "100"]),
    ("parity length 10^9", ["prove", "parity", "--max-length", "1000000000"]),
    ("parity length 30", ["prove", "parity", "--max-length", "30"]),
    ("hierarchy N=100", ["prove", "hierarchy", "--N", "100", "--D", "8", "--Dv", "8"]),
    ("sweep universal n=1000", ["sweep", "universal", "--size", "n=2,1000", "--out-dir", "sw"]),
    ("verify a huge recorded size", ["verify", "huge.json"]),
    # reading input
    ("verify /dev/zero", ["verify", "/dev/zero"]),
    ("verify a FIFO", ["verify", "fifo"]),
    ("verify a symlink to a FIFO", ["verify", "link"]),
    ("verify a folder", ["verify", "folder"]),
    ("verify over --max-bytes", ["verify", "--max-bytes", "100", "keep.json"]),
    ("verify duplicate keys", ["verify", "dup.json"]),
    ("inputs /dev/zero", ["prove", "relu", "--n", "1", "--inputs", "/dev/zero"]),
    ("inputs a FIFO", ["prove", "relu", "--n", "1", "--inputs", "fifo"]),
    ("inputs nested 100000 deep", ["prove", "relu", "--n", "1", "--inputs", "deep.json"]),
    ("inputs a 20000-digit integer", ["prove", "relu", "--n", "1", "--inputs", "bigint.json"]),
    ("negative byte limit", ["verify", "--max-bytes", "-1", "keep.json"]),
    ("zero digit limit", ["verify", "--max-digits", "0", "keep.json"]),
    # numbers at the edges
    ("eps 1e-400 convergence", ["prove", "sinkhorn_convergence", "--eps", "1e-400"]),
    ("eps 1e-400 transformer", ["prove", "sinkhorn_transformer", "--eps", "1e-400"]),
    ("eps 1e-400 universality", ["prove", "sinkhorn_universality", "--eps", "1e-400"]),
    ("eps 1e-6 transformer", ["prove", "sinkhorn_transformer", "--eps", "1e-6"]),
    ("widths 1000", ["prove", "sinkhorn_universality", "--widths", "1000"]),
    ("negative eps", ["prove", "sinkhorn_convergence", "--eps", "-1/10"]),
    ("negative eps in a list", ["prove", "sinkhorn_convergence", "--eps", "1/5,-1/10"]),
    ("zero eps", ["prove", "sinkhorn_fixed_point", "--eps", "0"]),
    ("negative held-out count", ["prove", "sinkhorn_universality", "--held-out", "-1"]),
    ("repeated flag", ["prove", "universal", "--n", "2", "--n", "3"]),
    ("repeated out", ["prove", "relu", "--out", "a.json", "--out", "b.json"]),
    ("size abc", ["prove", "relu", "--n", "abc"]),
    ("size NaN", ["prove", "relu", "--n", "NaN"]),
    ("jobs 0", ["sweep", "relu", "--jobs", "0", "--out-dir", "sw"]),
    # limits over their ceilings, and runs too large to plan (issue 21)
    ("digit limit over a C int", ["verify", "--max-digits", "2147483648", "keep.json"]),
    ("byte limit 10^23", ["verify", "--max-bytes", "99999999999999999999999", "keep.json"]),
    ("precision limit 10^30", ["prove", "relu", "--max-precision", "1" + "0" * 30]),
    ("a 5000-digit limit", ["verify", "--max-entries", "9" * 5000, "keep.json"]),
    ("a billion seeds", ["sweep", "transpose", "--seeds", "0-1000000000", "--out-dir", "folder"]),
    ("a seed of 50 digits", ["sweep", "transpose", "--seeds", "1" * 50, "--out-dir", "folder"]),
    ("decimals over the digit limit", ["rasp", "--eval", "1/3", "--decimals", "100000000"]),
    ("decimals 10^14", ["rasp", "--eval", "1/3", "--decimals", "99999999999999"]),
    # sizes no cost model bounded, found by trying every numeric option of every verb with 10^32, -1, 0, text
    ("a fixed point of 10^32 rows", ["prove", "sinkhorn_fixed_point", "--n", "9" * 32]),
    ("a limit plan of 10^32 columns", ["prove", "sinkhorn_limit", "--m", "9" * 32]),
    ("a transformer of 10^32 layers", ["prove", "sinkhorn_transformer", "--layers", "9" * 32]),
    ("a transformer graph of 10^32 heads", ["graph", "sinkhorn_transformer", "--heads", "9" * 32]),
    ("multihead with 10^32 heads", ["prove", "multihead", "--h", "9" * 32]),
    ("match2 words of length 10^32", ["prove", "match2", "--max-length", "9" * 32]),
    ("a reference budget of 10^32", ["prove", "sinkhorn_convergence", "--ref-iter", "9" * 32]),
    ("h = 1e-400", ["prove", "lipschitz_approx", "--h", "1e-400"]),
    ("softmax at beta 10^32", ["prove", "compiled_softmax", "--betas", "9" * 32]),
    ("universality to tol 1e-400", ["prove", "sinkhorn_universality", "--tol", "1e-400", "--pairs", "1", "--held-out", "0", "--widths", "1"]),
    # a folder that does not exist is never made (only the default output folders are)
    ("out in a missing folder", ["prove", "relu", "--out", "missing/x.json"]),
    ("out in a missing folder at the root", ["prove", "relu", "--out", "/nonexistent-attncert/dir/x.json"]),
    ("compile out in a missing folder", ["compile", "relu", "--out", "missing/m.json"]),
    ("graph out in a missing folder", ["graph", "relu", "--out", "missing/g.dot"]),
    ("plot out in a missing folder", ["plot", "lipschitz_rates", "--m1", "2", "--m2", "2", "--m3", "2", "--out", "missing/p.png"]),
    ("prove-all into a missing folder", ["prove-all", "--out-dir", "missing/certs"]),
    ("sweep into a missing folder", ["sweep", "relu", "--out-dir", "missing/sw"]),
    ("chunks under a missing folder", ["prove", "match2", "--max-length", "2", "--chunks", "missing/c", "--out", "m.json"]),
    ("jobs -1", ["prove", "match2", "--jobs", "-1"]),
    ("unknown claim", ["prove", "no_such_claim"]),
]
if not ROOT:  # root writes into a read-only folder; /proc above covers the unwritable case for root
    CASES.append(("out in a read-only folder", ["prove", "relu", "--out", "ro/c.json"]))


#: Address space of each invocation: a blow-up is a MemoryError (one line) or a kill, never the machine's memory.
MEMORY_CAP = 2 << 30


def memory_cap() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    (tmp_path / "folder").mkdir()
    (tmp_path / "afile").write_bytes(b"a regular file\n")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "fifo")
    doc = certificate("relu", {"n": 1}, {}, {}, {}, {}, {"relation": "exact_equal", "holds": True})
    (tmp_path / "keep.json").write_bytes(canonical_json(seal(doc)) + b"\n")
    huge = certificate("relu", {"n": 10**9, "seed": 0, "domain": "EE"}, {}, {}, {}, {}, {"relation": "exact_equal", "holds": True})
    (tmp_path / "huge.json").write_bytes(canonical_json(seal(huge)) + b"\n")
    text = canonical_json(seal(doc)).decode()
    (tmp_path / "dup.json").write_text(text.replace('{"claim":', '{"claim":"x","claim":', 1))
    (tmp_path / "deep.json").write_text('{"x":' + "[" * 100_000 + "]" * 100_000 + "}")
    (tmp_path / "bigint.json").write_text('{"x": [[' + "7" * 20_000 + "]]}")
    if not ROOT:
        (tmp_path / "ro").mkdir(mode=0o555)
    return tmp_path


def snapshot(root: Path) -> dict[str, tuple[str, bytes | None]]:
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(dirpath) / name
            st = os.lstat(p)
            kind = "link" if stat.S_ISLNK(st.st_mode) else "fifo" if stat.S_ISFIFO(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "file"
            out[str(p.relative_to(root))] = (kind, p.read_bytes() if kind == "file" else None)
    return out


@pytest.mark.parametrize("args", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_hostile_invocation_is_refused_cleanly(args: list[str], scratch: Path) -> None:
    before = snapshot(scratch)
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "attncert", *args], cwd=scratch, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        preexec_fn=memory_cap,
    )
    elapsed = time.monotonic() - t0
    said = done.stderr.strip() or done.stdout.strip()
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr[-500:])
    assert "Traceback" not in done.stdout + done.stderr
    assert len(said.splitlines()) == 1, said
    assert elapsed < 15, f"took {elapsed:.1f} s"
    assert snapshot(scratch) == before  # nothing created, nothing changed, FIFO and link intact
    assert not os.path.lexists("/nonexistent-attncert")
    assert stat.S_ISFIFO(os.lstat(scratch / "fifo").st_mode) and stat.S_ISLNK(os.lstat(scratch / "link").st_mode)


def test_the_table_is_long_enough():
    assert len(CASES) >= 40
