"""prove and verify agree on limits: a certificate prove writes at some limits verifies at the same limits,
and one verify would refuse is refused by prove, with verify's own line (exact.certificate.check_within_limits,
run on the bytes prove is about to write and on every file verify reads)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from flint import fmpq

from attncert.exact import QQ
from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import certificate_bytes, load_certificate_bytes, seal
from attncert.exact.errors import LimitExceeded
from attncert.exact.limits import Limits, limits
from attncert.proofs.core.certify import certificate
from attncert.proofs.core.verify import BAD, verify_bytes


def document(**outputs) -> dict:
    return certificate("relu", {"n": 1}, {}, {}, outputs, {}, {"relation": "exact_equal", "holds": True})


def refusals(doc: dict, lim: Limits) -> tuple[str, str]:
    """(prove's refusal, verify's reason) for a document at these limits."""
    with limits(lim), pytest.raises(LimitExceeded) as refused:
        certificate_bytes(doc)
    outcome = verify_bytes(canonical_json(seal(doc)) + b"\n", lim=lim)
    assert outcome.status == BAD
    return str(refused.value), outcome.reason


ee_sum = lambda *pairs: [[q, c] for q, c in pairs]  # noqa: E731


@pytest.mark.parametrize(
    "outputs, lim, says",
    [
        ({"e": {"num": ee_sum(["1000001", "1"]), "den": ee_sum(["0", "1"])}}, Limits(), "over the limit of 1,000,000 in absolute value (raise it with --max-exponent)"),
        ({"e": {"num": ee_sum(["-2000001/2", "1"]), "den": ee_sum(["0", "1"])}}, Limits(), "over the limit of 1,000,000 in absolute value"),
        ({"e": {"num": ee_sum(*[[str(k), "1"] for k in range(6)]), "den": ee_sum(["0", "1"])}}, Limits(max_terms=5), "has 6 terms, over the limit of 5"),
        ({"m": [["1", "2", "3"], ["4", "5", "6"]]}, Limits(max_entries=5), "matrix of 6 entries, over the limit of 5 (raise it with --max-entries)"),
        ({"x": "y" * 600}, Limits(max_bytes=500), "bytes, over the limit of 500 (raise it with --max-bytes)"),
    ],
    ids=["exponent", "fraction exponent", "terms", "entries", "bytes"],
)
def test_prove_refuses_with_the_line_verify_gives(outputs, lim, says):
    prove_says, verify_says = refusals(document(**outputs), lim)
    assert prove_says == verify_says and says in prove_says


@pytest.mark.parametrize(
    "outputs, lim",
    [
        ({"e": {"num": ee_sum(["-1000000", "1"], ["1000000", "1"]), "den": ee_sum(["0", "1"])}}, Limits()),
        ({"e": {"num": ee_sum(["-99999999999/100000", "1"], ["1999999/2", "1"]), "den": ee_sum(["0", "1"])}}, Limits()),  # 999999.99999, 999999.5
        ({"m": [["1", "2", "3"], ["4", "5", "6"]]}, Limits(max_entries=6)),
    ],
    ids=["exponents", "fraction exponents", "entries"],
)
def test_a_document_at_its_limits_is_written_and_read(outputs, lim):
    with limits(lim):
        data = certificate_bytes(document(**outputs))
        assert load_certificate_bytes(data)["outputs"] == outputs


@pytest.mark.parametrize("digits", [(101, 1), (1, 101), (5000, 1), (1, 9000)], ids=["numerator", "denominator", "long", "long denominator"])
def test_a_rational_over_the_digit_limit_is_refused_when_written_with_the_line_of_its_reader(digits):
    # Which strings are numbers only their reader knows, so the writer refuses them: attncert writes nothing it cannot read.
    x = fmpq(10 ** digits[0] - 1, 10 ** digits[1] + 1)  # in lowest terms: the limit is one below its longer part
    limit = max(len(str(x.p)), len(str(x.q))) - 1
    with limits(Limits(max_digits=limit)), pytest.raises(LimitExceeded) as written:
        QQ.to_json(x)
    with limits(Limits(max_digits=limit)), pytest.raises(LimitExceeded) as read:
        QQ.from_json(x.str())
    assert str(written.value) == str(read.value) and f"over the limit of {limit:,} (raise it with --max-digits)" in str(read.value)
    with limits(Limits(max_digits=limit + 1)):
        assert QQ.from_json(QQ.to_json(x)) == x


def test_text_that_is_not_a_number_is_not_held_to_the_digit_limit():
    # match2 records its readouts as texts of 0s and 1s, millions long
    doc = document(statement="the digits " + "1" * 300 + " are text", readouts={"M=5,n=8": "10" * 10_000})
    with limits(Limits(max_digits=100)):
        assert load_certificate_bytes(certificate_bytes(doc))["outputs"]["readouts"] == {"M=5,n=8": "10" * 10_000}


@pytest.fixture
def memory_capped():
    """A preexec_fn capping the child's address space at 2 GiB: a blow-up is a MemoryError or an abort, never a swap storm."""
    import resource

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    return cap


def test_sinkhorn_at_a_small_eps_is_refused_by_prove_as_verify_refuses_it(tmp_path: Path, memory_capped):
    # The example: at eps = 1/40000 a Sinkhorn bound has ~19,600 digits; verify refuses it at its default
    # 10,000. prove now refuses it too, with verify's line, and writes nothing; with --max-digits 20000 both accept.
    args = [sys.executable, "-m", "attncert", "prove", "sinkhorn_convergence", "--n", "3", "--eps", "1/40000"]
    refused = subprocess.run([*args, "--out", "c.json"], cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=memory_capped)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    (line,) = refused.stderr.strip().splitlines()
    assert "over the limit of 10,000 (raise it with --max-digits)" in line
    assert not (tmp_path / "c.json").exists()
    raised = subprocess.run([*args, "--out", "c.json", "--max-digits", "20000"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert raised.returncode == 0, raised.stderr
    verify = [sys.executable, "-m", "attncert", "verify", "c.json"]
    at_default = subprocess.run(verify, cwd=tmp_path, capture_output=True, text=True, timeout=300, preexec_fn=memory_capped)
    assert at_default.returncode == 2 and at_default.stdout.startswith("BAD")
    assert at_default.stdout.strip().endswith(line.removeprefix("attncert: error: "))  # the same refusal
    assert subprocess.run([*verify, "--max-digits", "20000"], cwd=tmp_path, capture_output=True, text=True, timeout=300).returncode == 0
