"""verify's verdicts (issue 35): whether a document is genuine and what it proves are told apart, in words and
exit codes a script can rely on: OK 0 (genuine, holds), DOES-NOT-HOLD 1 (genuine, does not hold), BAD 2
(malformed), REJECTED 3 (tampered with or forged), NOT-PROVEN 4 (genuine, the method did not decide); several
files exit with the worst, in the order REJECTED, BAD, NOT-PROVEN, DOES-NOT-HOLD, OK."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal

PROGRAM = "reverse = aggregate(select(indices, length - indices - 1, ==), tokens);\n"


def attncert(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attncert", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def resealed(doc: dict, **result) -> bytes:
    """The document with these result members, sealed again as a forger would."""
    changed = {k: v for k, v in doc.items() if k != "sha256"}
    return canonical_json(seal({**changed, "result": {**doc["result"], **result}}))


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """ok.json (reverse of hello, as expected), no.json (a wrong expectation: genuine, does not hold),
    forged-yes.json and forged-no.json (each verdict flipped, resealed), tampered.json (a byte changed, hash
    not recomputed), bad.json (truncated), unproven.json (compiled_softmax at 4 bits: B(1000) is an upper
    bound above tol, which does not show the distance above it: genuine, not proven)."""
    d = tmp_path_factory.mktemp("verdicts")
    (d / "rev.rasp").write_text(PROGRAM)
    base = ["prove", "rasp_program", "--file", "rev.rasp", "--expr", "reverse", "--input", "hello", "--expect"]
    assert attncert(*base, '["o", "l", "l", "e", "h"]', "--out", "ok.json", cwd=d).returncode == 0
    r = attncert(*base, '["o", "l", "l", "e"]', "--out", "no.json", cwd=d)
    assert r.returncode == 1, r.stderr  # prove: the claim does not hold
    ok, no = (json.loads((d / f"{n}.json").read_text()) for n in ("ok", "no"))
    assert ok["result"]["holds"] is True and no["result"]["holds"] is False
    (d / "forged-yes.json").write_bytes(resealed(no, holds=True))
    (d / "forged-no.json").write_bytes(resealed(ok, holds=False))
    (d / "tampered.json").write_bytes((d / "ok.json").read_bytes().replace(b'"hello"', b'"hallo"'))
    (d / "bad.json").write_bytes((d / "ok.json").read_bytes()[:80])
    soft = ["prove", "compiled_softmax", "--of", "matmul", "--sizes", "r=1,k=2,c=1", "--betas", "1000", "--tol", "1/1000", "--prec", "4"]
    r = attncert(*soft, "--out", "unproven.json", cwd=d)
    assert r.returncode == 1 and "not proven: no beta reaches" in r.stdout, r.stdout + r.stderr  # prove: not established
    return d


@pytest.mark.parametrize(
    "name, word, code",
    [
        ("ok", "OK", 0),
        ("no", "DOES-NOT-HOLD", 1),
        ("bad", "BAD", 2),
        ("forged-yes", "REJECTED", 3),
        ("forged-no", "REJECTED", 3),
        ("tampered", "REJECTED", 3),
        ("unproven", "NOT-PROVEN", 4),
    ],
)
def test_each_verdict_has_its_word_and_exit_code(folder, name, word, code):
    r = attncert("verify", f"{name}.json", cwd=folder)
    assert r.returncode == code and [w.rstrip(":") for w in r.stdout.split()[:2]] == [word, f"{name}.json"] and len(r.stdout.splitlines()) == 1, r.stdout + r.stderr


def test_an_unproven_certificate_says_so_and_not_that_the_claim_fails(folder):
    r = attncert("verify", "unproven.json", cwd=folder)
    assert "genuine; the claim is not proven (it may hold): no listed beta has B(beta) <= 1/1000 at this precision" in r.stdout, r.stdout
    assert "does not hold" not in r.stdout


def test_the_reasons_say_genuine_or_what_was_found(folder):
    r = attncert("verify", "no.json", "forged-yes.json", "tampered.json", cwd=folder)
    no, yes, tampered, tally = r.stdout.splitlines()
    assert no.endswith('genuine; the claim does not hold: expected ["o", "l", "l", "e"], got ["o", "l", "l", "e", "h"]'), no
    assert "genuine" not in yes and "genuine" not in tampered
    assert "sha256 mismatch" in tampered
    assert tally == "3 certificates: 0 genuine and holding (OK), 1 genuine and not holding (DOES-NOT-HOLD), 0 genuine and not proven (NOT-PROVEN), 2 rejected (REJECTED), 0 malformed (BAD)"


@pytest.mark.parametrize(
    "names, code",
    [
        (["ok", "no"], 1),
        (["no", "bad"], 2),
        (["bad", "forged-yes"], 3),
        (["forged-no", "ok", "no", "bad"], 3),
        (["no", "unproven", "ok"], 4),
        (["unproven", "bad"], 2),
        (["unproven", "tampered"], 3),
    ],
)
def test_several_files_exit_with_the_worst(folder, names, code):
    assert attncert("verify", *(f"{n}.json" for n in names), cwd=folder).returncode == code


def test_a_folder_gets_a_tally_and_a_genuine_certificate_that_does_not_hold_still_plots(folder, tmp_path):
    r = attncert("verify", ".", cwd=folder)
    assert r.returncode == 3
    assert r.stdout.splitlines()[-1] == "7 certificates: 1 genuine and holding (OK), 1 genuine and not holding (DOES-NOT-HOLD), 1 genuine and not proven (NOT-PROVEN), 3 rejected (REJECTED), 1 malformed (BAD)"
    # plot draws a genuine certificate whether or not its claim holds (and exits as prove does), never a forged one
    out = tmp_path / "no.png"
    r = attncert("plot", "rasp_program", "--certificate", "no.json", "--out", str(out), cwd=folder)
    assert r.returncode == 1 and out.stat().st_size > 0, r.stderr
    r = attncert("plot", "rasp_program", "--certificate", "forged-yes.json", "--out", str(tmp_path / "f.png"), cwd=folder)
    assert r.returncode == 2 and "does not verify (REJECTED" in r.stderr and not (tmp_path / "f.png").exists()
