"""tracr's own compiler test cases through attncert's exact compiler, against tracr's compiler: the table of docs/compiler.md.

    python -m bench.tracr_cases            # the markdown table (needs the tracr extra: pip install '.[tracr]')

Each case of ``tracr.compiler.test_cases.TEST_CASES`` (tracr's file, read from the installed tracr
package) is converted to attncert's RASP by :mod:`constructions.tracr.program` (lambdas kept as
callables, tabulated by the compiler on the value sets it infers), compiled by
:func:`constructions.compiler.compile_graph` for the test input's length with categorical tokens
over the case's vocabulary, run by the independent forward pass of ``proofs/checkers/forward.py``
(which never imports the compiler) on the model's JSON, and compared with tracr's
``expected_output``: symbols, booleans and None with ``==`` (as tracr's tests compare; True == 1),
numbers as the nearest double of our exact rational against tracr's float.

tracr's residual width and layer count are those of ``compile_rasp_to_model`` at the case's vocab
and ``max_seq_len``, computed by its own stages (:func:`tracr_size`: every stage up to the craft
model, then the residual space ``assemble_craft_model`` joins) without building the haiku model,
which takes seconds per case; tests/constructions/test_compiler_tracr_cases.py checks the two agree
(slow). Ours is the width of the model for the test input's length N (a model for one length), and of the
model for max_seq_len tokens.
``UNSUPPORTED_TEST_CASES`` (tracr refuses them) are listed with what attncert's compiler says at
``max_seq_len``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from flint import fmpq

from attncert.constructions import rasp
from attncert.constructions.compiler import NotCompilable, compile_graph
from attncert.constructions.compiler.model import Model, model_to_json
from attncert.constructions.rasp.values import decode_value, encode_value
from attncert.constructions.tracr.program import from_tracr, to_rasp
from attncert.exact import QQ
from attncert.proofs.checkers.forward import forward


def cases(kind: str = "TEST_CASES") -> list[dict[str, Any]]:
    """tracr's own test cases (a list of ``tracr.compiler.test_cases``), as tracr's file defines them."""
    from tracr.compiler import test_cases

    return list(getattr(test_cases, kind))


def compile_case(case: dict[str, Any], length: int | None = None, check: bool = True) -> Model:
    """attncert's exact model of the case's program, categorical tokens over its vocab, for ``length``
    tokens (the test input's length by default)."""
    g = rasp.to_graph(to_rasp(from_tracr(case["program"])))
    return compile_graph(g, length or len(case["test_input"]), "categorical", case["vocab"], check=check)


def independent_output(model_json: dict[str, Any], tokens: Sequence[Any]) -> list[Any]:
    """The model's output on ``tokens`` by the independent forward pass, exactly (QQ): a numerical output
    is its column at positions 1..N; a one-hot output the value of ``output_values`` whose column holds
    1 there, None where none does (docs/compiler.md, the JSON format). Categorical tokens are given to
    the forward pass in the JSON encoding of values, numbers as they are."""
    categorical = model_json["tokens"] == "categorical"
    res = forward(model_json, [encode_value(t) for t in tokens] if categorical else list(tokens), QQ)
    cols = [res[c][1:] for c in model_json["outputs"]["output"]]
    values = model_json["output_values"]["output"]
    if values is None:
        return cols[0]
    return [next((decode_value(v) for v, x in zip(values, row) if x == 1), None) for row in zip(*cols)]


def equals_expected(got: Sequence[Any], expected: Sequence[Any]) -> bool:
    """Our exact outputs against tracr's expected ones: a rational is compared as its nearest double with
    tracr's float (1/3 and tracr's 1 / 3), anything else with ``==`` as tracr's tests do."""
    if len(got) != len(expected):
        return False
    for x, e in zip(got, expected):
        if isinstance(x, fmpq):
            if isinstance(e, (str, type(None))) or float(Fraction(int(x.p), int(x.q))) != e:
                return False
        elif x != e:
            return False
    return True


def tracr_size(program: Any, vocab: set[Any], max_seq_len: int) -> tuple[int, int]:
    """(residual width, layers) of tracr's ``compile_rasp_to_model(program, vocab, max_seq_len)``: its
    stages up to the craft model (compiling.py), then the residual space that ``assemble_craft_model``
    joins (the craft model's, tokens with BOS and PAD, indices 0..max_seq_len - 1, the output space),
    and the layer count of its model config."""
    from tracr.compiler import assemble, basis_inference, compiling, craft_graph_to_model, expr_to_craft_graph, nodes, rasp_to_graph
    from tracr.craft import bases
    from tracr.rasp import rasp as tracr_rasp

    extracted = rasp_to_graph.extract_rasp_graph(program)
    graph, sink = extracted.graph, extracted.sink
    basis_inference.infer_bases(graph, sink, vocab, max_seq_len)
    expr_to_craft_graph.add_craft_components_to_rasp_graph(graph, bos_dir=bases.BasisDirection(tracr_rasp.tokens.label, compiling.COMPILER_BOS), mlp_exactness=100)
    craft = craft_graph_to_model.craft_graph_to_model(graph, extracted.sources)
    tokens = bases.VectorSpaceWithBasis.from_values(tracr_rasp.tokens.label, graph.nodes[tracr_rasp.tokens.label][nodes.VALUE_SET] | {compiling.COMPILER_BOS, compiling.COMPILER_PAD})
    indices = bases.VectorSpaceWithBasis.from_values(tracr_rasp.indices.label, range(max_seq_len))
    output = bases.VectorSpaceWithBasis(sink[nodes.OUTPUT_BASIS])
    residual = bases.join_vector_spaces(craft.residual_space, tokens, indices, output)
    config, _ = assemble._get_model_config_and_module_names(craft)
    return residual.num_dims, config.num_layers


def row(case: dict[str, Any]) -> dict[str, Any]:
    """One case: our layers and width, tracr's, and whether our output equals ``expected_output``."""
    model = compile_case(case)
    got = independent_output(model_to_json(model), case["test_input"])
    width, layers = tracr_size(case["program"], case["vocab"], case["max_seq_len"])
    return {
        "case": case["testcase_name"],
        "length": len(case["test_input"]),
        "layers": len(model.layers),
        "width": model.width(),
        "width_at_max": compile_case(case, case["max_seq_len"], check=False).width(),
        "tracr_layers": layers,
        "tracr_width": width,
        "equal": equals_expected(got, case["expected_output"]),
    }


def unsupported_row(case: dict[str, Any]) -> str:
    """What attncert's compiler does with a case tracr refuses, at the case's max_seq_len."""
    try:
        model = compile_case(case, case["max_seq_len"])
    except NotCompilable as e:
        return f"refused: {str(e).split(': ', 1)[1]}"
    return f"compiles: {len(model.layers)} layer(s), width {model.width()}, checked on {model.checked.inputs} inputs"


def main() -> None:
    rows = [row(c) for c in cases()]
    print("| case | N | max_seq_len | layers (ours / tracr) | width at N (ours / tracr) | ours at max_seq_len | equal to `expected_output` |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r, c in zip(rows, cases()):
        print(
            f"| {r['case']} | {r['length']} | {c['max_seq_len']} | {r['layers']} / {r['tracr_layers']} | {r['width']} / {r['tracr_width']} "
            f"| {r['width_at_max']} | {'yes' if r['equal'] else 'NO'} |"
        )
    wider = [r["case"] for r in rows if max(r["width"], r["width_at_max"]) > r["tracr_width"]]
    print(f"\n{sum(r['equal'] for r in rows)} of {len(rows)} equal to expected_output; wider than tracr's: {', '.join(wider) or 'none'}")
    print("\n| tracr refuses (UNSUPPORTED_TEST_CASES) | attncert, at max_seq_len |")
    print("| --- | --- |")
    for c in cases("UNSUPPORTED_TEST_CASES"):
        print(f"| {c['testcase_name']} | {unsupported_row(c)} |")


if __name__ == "__main__":
    main()
