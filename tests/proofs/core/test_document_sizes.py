"""The certificate's size in the cost model (issue 30, section 3): the estimate is an upper bound on the bytes
``prove`` writes, at sampled sizes of every claim it covers; a run whose certificate would be over --max-bytes
is refused before the work, naming that limit with the others it breaks; verify, which reads a document's own
size, does not hold a certificate to the estimate.

Was: `prove universal --n 256 --d 8 --dv 8 --max-positions 600000` worked 20 s, then refused a document of
79,631,939 bytes; `prove multihead --n 16 --d 8 --dv 8 --h 4 --do 8`, within every default limit, worked 270 s
for a document of 1.28 GB.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from attncert.exact.certificate import certificate_bytes
from attncert.exact.limits import Limits, limits
from attncert.proofs.core.cost import estimate
from attncert.proofs.core.registry import INDEX, load_claim

#: Sizes at which each covered claim proves in well under a second, chosen so that each part of the model
#: (inputs, outputs of many terms, the rest of the sequence, several heads, balls, cases, a compiled model,
#: Sinkhorn runs at small eps) carries weight in one of them.
SAMPLES = [
    ("universal", {"n": 4, "d": 2, "dv": 2}),
    ("universal", {"n": 16, "d": 2, "dv": 8}),
    ("universal", {"n": 8, "d": 8, "dv": 8, "seed": 3}),
    ("multihead", {"n": 4, "d": 2, "dv": 2, "h": 2, "do": 2}),
    ("multihead", {"n": 3, "d": 2, "dv": 2, "h": 5, "do": 2}),
    ("multihead", {"n": 2, "d": 32, "dv": 32, "h": 4, "do": 32}),
    ("encoder_layer", {"n": 4, "d": 2, "dv": 2, "h": 3, "f": 2}),
    ("encoder_layer", {"n": 2, "d": 16, "dv": 8, "h": 4, "f": 32}),
    ("encoder_layer_norm", {"n": 4, "d": 4, "dv": 4, "h": 3, "f": 4, "prec": 1024}),
    ("hierarchy", {"N": 4, "D": 2, "Dv": 2}),
    ("transpose", {"r": 32, "c": 32}),
    ("matmul", {"r": 4, "k": 2000, "c": 4}),
    ("softmax", {"r": 2, "c": 256}),
    ("relu", {"n": 2000}),
    ("maxmin", {"n": 2000, "domain": "QQ"}),
    ("inverse3", {}),
    ("compiled", {"of": "encoder_layer", "sizes": "n=4,d=2,dv=2,h=2,f=2"}),
    ("compiled", {"of": "maxmin", "sizes": "n=256"}),
    ("sinkhorn_convergence", {"n": 6, "m": 10, "eps": "1/5,1/500"}),
]


@pytest.mark.parametrize("claim, params", SAMPLES, ids=[f"{c}-{'-'.join(map(str, p.values()))}" for c, p in SAMPLES])
def test_the_estimate_is_an_upper_bound_on_the_certificate(claim, params):
    c = load_claim(claim)
    lim = Limits()
    cost = estimate(c, params, lim)
    with limits(lim):
        written = len(certificate_bytes(c.prove(**{**c.defaults(), **params})))
    assert written <= cost.document, f"{claim} {params}: wrote {written:,} bytes, estimated {cost.document:,}"
    # Modest: past the fixed part (envelope, statement, graph) the estimate is within 3x of the document.
    assert cost.document <= 3 * written + 40_000, f"{claim} {params}: wrote {written:,} bytes, estimated {cost.document:,}"


def test_the_default_sizes_are_within_the_default_byte_limit():
    lim = Limits()
    for name in INDEX:
        c = load_claim(name)
        assert estimate(c, {}, lim).document <= lim.max_bytes, name


def prove(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", "prove", *args], capture_output=True, text=True, timeout=120)


def test_the_audits_run_is_refused_before_the_work():
    t0 = time.monotonic()
    done = prove("universal", "--n", "256", "--d", "8", "--dv", "8", "--max-positions", "600000", "--out", "-")
    assert time.monotonic() - t0 < 15  # the run itself takes about 20 s before its certificate is formed
    said = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(said) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "needs a certificate of about" in said[0] and "over the limit of 67,108,864 (raise it with --max-bytes" in said[0]


def test_estimate_names_every_limit_the_run_would_break():
    # U(256, 8, 8): 524,288 positions over 32,768, and a certificate over 64 MiB (79.6 MB written, with the limits raised)
    done = prove("universal", "--n", "256", "--d", "8", "--dv", "8", "--estimate")
    refused = [line for line in done.stdout.splitlines() if line.startswith("  would be refused: ")]
    assert done.returncode == 2 and len(refused) == 2, done.stdout  # as the run would exit
    assert "524,288 positions" in refused[0] and "--max-bytes" in refused[1]


def test_verify_reads_the_documents_own_size_not_the_estimate(tmp_path: Path):
    # A certificate between its real size and its estimate: prove at that --max-bytes is refused up front, while
    # verify at it reads the document, which is within it.
    out = tmp_path / "u.json"
    args = ["universal", "--n", "16", "--d", "2", "--dv", "8"]
    assert prove(*args, "--out", str(out)).returncode == 0
    real = out.stat().st_size
    c = load_claim("universal")
    estimated = estimate(c, {"n": 16, "d": 2, "dv": 8}, Limits()).document
    assert real < estimated
    between = str((real + estimated) // 2)
    refused = prove(*args, "--out", str(tmp_path / "again.json"), "--max-bytes", between)
    assert refused.returncode == 2 and "--max-bytes" in refused.stderr and not (tmp_path / "again.json").exists()
    verified = subprocess.run([sys.executable, "-m", "attncert", "verify", "--max-bytes", between, str(out)], capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0 and verified.stdout.startswith("OK"), verified.stdout + verified.stderr
