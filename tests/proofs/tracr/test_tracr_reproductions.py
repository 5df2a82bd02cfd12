"""tracr's known failures as counterexample certificates, compiled by tracr itself (the tracr extra; CI has it).

These fail if tracr ever changes behaviour silently: each asserts what tracr-pypi 1.0.0's model
decodes, and the exact value attncert gives, derived by hand. Slow: each compile with tracr takes
seconds (JAX).
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from attncert.exact.canonical import canonical_json
from attncert.exact.certificate import seal
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import load_claim
from attncert.proofs.core.verify import DOES_NOT_HOLD, verify_bytes

pytest.importorskip("tracr", reason="the tracr extra: pip install '.[tracr]' in attncert's folder")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
CLAIM = load_claim("tracr_model")


def prove(program: str, vocab: str, max_seq_len: int, **kw) -> dict:
    from attncert.proofs.tracr.model import tolerance

    params = {**CLAIM.defaults(), "program": f"tests.proofs.tracr.programs:{program}", "vocab": vocab, "max_seq_len": max_seq_len, **kw}
    params["tolerance"] = tolerance(str(params["tolerance"]))
    return CLAIM.prove(**params)


def true_counterexample_certificate(doc: dict) -> None:
    """The certificate is right about the model: its check and rebuild find nothing; verify says DOES-NOT-HOLD
    (genuine, exit 1): the claim (every input correct) does not hold."""
    assert not doc["result"]["holds"]
    assert CLAIM.check(doc) == [] and rebuilt_differences(CLAIM, doc) == []
    assert verify_bytes(canonical_json(seal(doc))).status == DOES_NOT_HOLD


def inputs_listed(doc: dict) -> list[str]:
    return ["".join(str(next(iter(t.values()))) for t in c["input"]) for c in doc["outputs"]["counterexamples"]]


def test_issue_25_default_none_decodes_as_a_token():
    doc = prove("shift_none", "0,1", 4)
    assert doc["result"]["counterexamples"] == doc["result"]["inputs"] == 2 + 4 + 8 + 16
    for c in doc["outputs"]["counterexamples"]:
        # position 1 has no previous token: RASP's None; the model decodes 0 or 1 there
        p = c["positions"][0]
        assert c["rasp"][0] is None and p["position"] == 1 and p["status"] == "counterexample"
        assert p["decoded"] in ({"q": "0"}, {"q": "1"}) or set(map(json.dumps, p["decoded"]["among"])) <= {'{"q": "0"}', '{"q": "1"}'}
    true_counterexample_certificate(doc)


def test_categorical_selector_width_of_ten_equal_tokens_decodes_as_nine():
    doc = prove("width_categorical", "a", 10)
    # a^n: every position sees n equal tokens, width n (by hand); only a^10 fails
    assert doc["result"]["correct"] == 9 and inputs_listed(doc) == ["a" * 10]
    (c,) = doc["outputs"]["counterexamples"]
    assert [p["decoded"] for p in c["positions"]] == [{"q": "9"}] * 10 and c["rasp"] == [{"q": "10"}] * 10
    assert c["leaves_encoding"]["stream"] == "layer 0 mlp"
    true_counterexample_certificate(doc)


def test_numerical_selector_width_gives_6_89_for_7():
    doc = prove("width_numerical", "a", 8)
    assert inputs_listed(doc) == ["a" * 7, "a" * 8]
    seven = doc["outputs"]["counterexamples"][0]["positions"][0]
    decoded = Fraction(seven["decoded"]["mid"])
    assert seven["rasp"] == {"q": "7"} and abs(decoded - Fraction(689, 100)) < Fraction(1, 100)
    true_counterexample_certificate(doc)


def test_the_softmax_of_coldness_100_leaks():
    """At tolerance 0 every input holding an x is a counterexample: softmax weighs the unselected
    keys too, so the fraction is never exact; the deviation is certified positive and below 10^-6."""
    doc = prove("frac_prevs", "x,a", 3, tolerance="0")
    with_x = sum(1 for n in (1, 2, 3) for k in range(2**n) if k != 2**n - 1)  # all but a, aa, aaa
    assert doc["result"]["counterexamples"] == with_x and doc["result"]["correct"] == 3
    for c in doc["outputs"]["counterexamples"]:
        for p in c["positions"]:
            assert 0 < Fraction(p["error"]) < Fraction(1, 10**6)
    true_counterexample_certificate(doc)
    # at the default tolerance 10^-6 the same model is certified correct on every input
    assert prove("frac_prevs", "x,a", 3)["result"]["holds"]


def cli(*args: str) -> tuple[int, str]:
    done = subprocess.run([sys.executable, "-m", "attncert", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    out = done.stdout + done.stderr
    assert "Traceback" not in out, out[-2000:]
    return done.returncode, out


def test_the_command_line_proves_prints_the_first_counterexample_and_verifies(tmp_path):
    code, out = cli("prove", "tracr_model", "--program", "tracr.compiler.lib:make_length", "--vocab", "a,b", "--max-seq-len", "4", "--out", str(tmp_path / "ok.json"))
    assert code == 0 and "all 30 inputs decode to the RASP output" in out
    assert cli("verify", str(tmp_path / "ok.json"))[0] == 0
    code, out = cli("prove", "tracr_model", "--program", "tests.proofs.tracr.programs:width_categorical", "--vocab", "a", "--max-seq-len", "10", "--out", str(tmp_path / "w.json"))
    assert code == 1 and "first: input ['a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'], RASP [10, 10, 10, 10, 10, 10, 10, 10, 10, 10], position 1 decodes to 9" in out
    code, out = cli("prove", "tracr_model", "--program", "tests.proofs.tracr.programs:shift_none", "--vocab", "0,1", "--max-seq-len", "2", "--causal", "--out", str(tmp_path / "c.json"))
    assert code == 1 and json.loads((tmp_path / "c.json").read_text())["params"]["causal"] == 1
    code, out = cli("verify", str(tmp_path / "c.json"))
    assert code == 1 and out.startswith("DOES-NOT-HOLD ") and "genuine; the claim does not hold" in out


def test_the_api_refuses_a_program_that_is_not_the_models_and_a_longer_length():
    from tracr.compiler import compiling, lib

    from attncert.exact import ParseError
    from attncert.exact.errors import AttncertError
    from attncert.proofs.tracr.model import certify_tracr

    program = lib.make_length()
    model = compiling.compile_rasp_to_model(program, vocab={"a", "b"}, max_seq_len=3, compiler_bos="BOS")
    assert certify_tracr(program, model)["result"]["holds"]
    with pytest.raises(ParseError, match="max_seq_len 4 is over the model's 3"):
        certify_tracr(program, model, max_seq_len=4)
    with pytest.raises(AttncertError, match="no column"):
        certify_tracr(lib.make_length(), model)  # another program: its output's label is not in the residual space


def test_the_ball_forward_pass_contains_what_jax_computes_up_to_float32_rounding():
    import itertools

    import numpy as np
    from flint import ctx
    from tracr.compiler import compiling
    from tests.proofs.tracr import programs

    from attncert.constructions.tracr.forward import forward
    from attncert.constructions.tracr.model import read_assembled

    program = programs.sort_unique()
    model = compiling.compile_rasp_to_model(program, vocab={1, 2, 3}, max_seq_len=3, compiler_bos="BOS")
    exact = read_assembled(model, program.label)
    batch = list(itertools.product([1, 2, 3], repeat=3))
    enc = model.input_encoder.encoding_map
    out = np.asarray(model.forward(model.params, np.array([[enc["BOS"]] + [enc[t] for t in xs] for xs in batch])).transformer_output.output)
    with ctx.workprec(64):
        state = forward(exact, batch)[-1]
    for b in range(len(batch)):
        for t in range(4):
            for c, x in enumerate(state.row(b, t)):
                assert abs(float(x.mid()) - float(out[b, t, c])) < 1e-4 and float(x.rad()) < 1e-12
