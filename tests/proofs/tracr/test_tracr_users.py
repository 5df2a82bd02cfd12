"""What a tracr user meets on the command line (issue 33): one line and exit 2 for what is not a program,
tracr's whole reason, library functions named with their arguments, result lines that name the model
certified, ``prove compiled --help``, and a SOp's own name kept in every report."""

from __future__ import annotations

import json

import pytest

from attncert.exact import ParseError
from attncert.proofs.cli import main
from attncert.proofs.core.user_programs import call_program, program_call, program_spec

pytest.importorskip("tracr")

PROGRAMS = "tests.proofs.tracr.programs"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_function_that_returns_no_sop_is_one_line_and_exit_2(capsys, tmp_path):
    code, _, err = run(capsys, "prove", "tracr_model", "--program", f"{PROGRAMS}:not_a_program", "--vocab", "a,b", "--max-seq-len", "2", "--out", str(tmp_path / "c.json"))
    assert code == 2
    assert err.strip().count("\n") == 0 and "gives a value of type int, not a tracr RASP SOp" in err
    assert "Traceback" not in err


def test_tracrs_refusal_is_shown_whole(capsys, tmp_path):
    code, _, err = run(capsys, "prove", "tracr_model", "--program", f"{PROGRAMS}:unsupported", "--vocab", "a,b", "--max-seq-len", "2", "--out", str(tmp_path / "c.json"))
    assert code == 2 and err.strip().count("\n") == 0
    # tracr's first line, and the reason it gives on the next one
    assert "Unsupported RASP expressions:" in err and "output encoding must match its input encoding" in err


def test_library_functions_take_arguments_read_not_evaluated():
    from tracr.compiler import lib
    from tracr.rasp import rasp

    from attncert.constructions.tracr.program import from_tracr

    def shape(p):
        return [(n.op, n.consts.get("predicate"), n.encoding) for n in from_tracr(p).nodes]

    got = call_program("tracr.compiler.lib:make_sort_unique(vals=tokens, keys=tokens)")
    assert shape(got) == shape(lib.make_sort_unique(rasp.tokens, rasp.tokens))
    # positional, keyword and negative literals, a comparison through RASP's own operator, a nested call
    sort = call_program("tracr.compiler.lib:make_sort(tokens, tokens, max_seq_len=5, min_key=1)")
    assert shape(sort) == shape(lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=5, min_key=1))
    frac = call_program('tracr.compiler.lib:make_frac_prevs(tokens == "x")')
    assert frac(["x", "a", "x", "x"]) == [1, 0.5, 2 / 3, 0.75]
    assert call_program("tracr.compiler.lib:make_length()")([1, 2, 3]) == [3, 3, 3]
    fn, args, kwargs = program_call("tracr.compiler.lib:shift_by(-1, tokens)")
    assert fn is lib.shift_by and args == [-1, rasp.tokens] and kwargs == {}
    assert program_spec("tracr.compiler.lib:make_hist") == ("tracr.compiler.lib", "make_hist")


@pytest.mark.parametrize(
    "spec, match",
    [
        ("tracr.compiler.lib:make_frac_prevs(tokens.x)", "outside what is read"),
        ("tracr.compiler.lib:make_sort(tokens, tokens, max_seq_len=__import__('os'), min_key=1)", "has no function '__import__'"),
        ("tracr.compiler.lib:make_frac_prevs(lambda t: t)", "outside what is read"),
        ("tracr.compiler.lib:shift_by(1 + 1, tokens)", "outside what is read"),
        ("tracr.compiler.lib:make_hist(", "do not parse"),
        ("tracr.compiler.lib:make_length(**x)", "not read"),
        ("tracr.compiler.lib:make_hist(tokens)", "raised TypeError"),
        ("tracr.compiler.lib:other(tokens)", "has no function 'other'"),
    ],
)
def test_arguments_outside_the_grammar_are_one_line(spec, match):
    with pytest.raises(ParseError, match=match):
        call_program(spec)


def test_prove_compiled_help_lists_the_options_of_a_program_of_your_own(capsys):
    with pytest.raises(SystemExit) as done:
        main(["prove", "compiled", "--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    for option in ("--program", "--file", "--expr", "--vocab", "--method", "--lengths", "--causal"):
        assert option in text, option


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """compile, prove compiled and prove tracr_model of one named tracr program (each line and file)."""
    import contextlib
    import io

    tmp = tmp_path_factory.mktemp("named")
    spec = f"{PROGRAMS}:my_length"
    lines = {}
    for verb, argv in {
        "compile": ["compile", "--program", spec, "--vocab", "a,b", "--max-seq-len", "2", "--out", str(tmp / "m.json")],
        "compiled": ["prove", "compiled", "--program", spec, "--vocab", "a,b", "--max-seq-len", "2", "--out", str(tmp / "c.json")],
        "tracr": ["prove", "tracr_model", "--program", spec, "--vocab", "a,b", "--max-seq-len", "2", "--out", str(tmp / "t.json")],
    }.items():
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(argv) == 0
        lines[verb] = out.getvalue()
    files = {k: json.loads((tmp / f).read_text()) for k, f in (("compile", "m.json"), ("compiled", "c.json"), ("tracr", "t.json"))}
    return lines, files


def test_every_result_line_names_the_model_it_certified(reports):
    lines, _ = reports
    assert "attncert's exact compile of my_length: all 4 inputs" in lines["compiled"]
    assert "tracr's compiled model of my_length: all 6 inputs decode" in lines["tracr"]


def test_a_named_sop_keeps_its_name_in_every_report(reports):
    _, files = reports
    assert "my_length" in files["compile"]["nodes"]
    assert files["compiled"]["construction"]["program"]["program"]["output"] == "my_length"
    tracr = files["tracr"]["construction"]
    assert tracr["program"]["output"] == tracr["model"]["output"]["label"] == "my_length"
    assert "my_length:2" in tracr["model"]["residual"] and "my_length_selector_width_attn_output" in tracr["model"]["residual"]


@pytest.mark.parametrize("method", ["exhaustive", "compositional"])
@pytest.mark.parametrize("function, outputs", [("parity_of_tokens", "parity"), ("above_half", "above_half")])
def test_lambdas_written_for_tracrs_python_numbers_run(capsys, tmp_path, method, function, outputs):
    """tracr calls a Map's lambda on Python numbers; attncert's exact evaluator held FLINT rationals, which have no
    ``%`` with an int and no comparison with a float: x % 2 made every input 'undefined' (exhaustive) or a
    traceback (compositional). Numbers now reach a tracr lambda as Fractions (x / 4 stays exact)."""
    out = tmp_path / "c.json"
    code, stdout, err = run(capsys, "prove", "tracr_model", "--method", method, "--program", f"{PROGRAMS}:{function}", "--vocab", "1,2,3", "--max-seq-len", "3", "--out", str(out))
    assert code == 0, err
    assert "Traceback" not in err and f"model of {outputs}" in stdout and "undefined" not in stdout
    assert run(capsys, "verify", str(out))[0] == 0


def test_a_lambda_raising_on_a_value_set_is_one_line_in_the_compositional_method(capsys, tmp_path):
    code, _, err = run(capsys, "prove", "tracr_model", "--method", "compositional", "--program", f"{PROGRAMS}:raising_on_a_value_set", "--vocab", "1,2,3", "--max-seq-len", "2", "--out", str(tmp_path / "c.json"))
    assert code == 2 and err.strip().count("\n") == 0 and "ZeroDivisionError" in err and "Traceback" not in err


def test_a_lambda_raising_on_a_value_set_attncert_adds_is_one_line():
    """attncert's value sets hold means tracr's inference misses (2/3 from two of three keys): a lambda raising on
    such a value is refused in one line by the tabulation the compositional method reads, naming the node."""
    from fractions import Fraction

    from tracr.rasp import rasp

    from attncert.constructions.tracr.program import ProgramError, from_tracr, tabulate_sets

    share = rasp.numerical(rasp.Aggregate(rasp.Select(rasp.indices, rasp.indices, rasp.Comparison.LEQ), rasp.numerical(rasp.Map(lambda t: 1 if t == "a" else 0, rasp.tokens)), default=0))
    program = rasp.numerical(rasp.Map(lambda x: 1 / (x - Fraction(2, 3)), share)).named("spike")
    with pytest.raises(ProgramError, match="'spike''s function raised ZeroDivisionError") as e:
        tabulate_sets(from_tracr(program), ["a", "b"], 3)
    assert "\n" not in str(e.value)
