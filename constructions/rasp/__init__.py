"""RASP, source-compatible with tracr: ``from attncert.constructions import rasp``.

The builder (:mod:`.expr`), graphs (:mod:`.graph`), the exact evaluator
(:mod:`.evaluate`), size accounting (:mod:`.size`) and the function registry
(:mod:`.functions`). See docs/design.md, "RASP as computation graphs".
"""

from attncert.constructions.rasp.evaluate import EvaluationError, evaluate, evaluate_graph, trace_graph
from attncert.constructions.rasp.expr import (
    Aggregate,
    Comparison,
    ConstantSelector,
    ConstantSOp,
    Encoding,
    Full,
    LinearSequenceMap,
    Map,
    NumericValue,
    Predicate,
    RASPExpr,
    Select,
    Selector,
    SelectorAnd,
    SelectorNot,
    SelectorOr,
    SelectorValue,
    SelectorWidth,
    SequenceMap,
    SOp,
    Value,
    annotate,
    categorical,
    get_encoding,
    indices,
    is_categorical,
    is_numerical,
    length,
    numerical,
    selector_and,
    selector_not,
    selector_or,
    sop_not,
    tokens,
)
from attncert.constructions.rasp.functions import NamedFn, fn, register_function, size_case
from attncert.constructions.rasp.graph import graph_from_json, graph_to_graphml, graph_to_json, to_graph
from attncert.constructions.rasp.dot import graph_to_dot
from attncert.constructions.rasp.size import Size, size
import attncert.constructions.rasp.language.functions  # noqa: E402,F401  (registers the RASP language's operators, so its graphs load anywhere)

__all__ = [
    "Aggregate", "Comparison", "ConstantSelector", "ConstantSOp", "Encoding", "Full", "LinearSequenceMap",
    "Map", "NumericValue", "Predicate", "SelectorValue", "Value", "RASPExpr", "Select", "Selector", "SelectorAnd", "SelectorNot", "SelectorOr", "SelectorWidth",
    "SequenceMap", "SOp", "annotate", "categorical", "get_encoding", "indices", "is_categorical",
    "is_numerical", "length", "numerical", "selector_and", "selector_not", "selector_or", "sop_not", "tokens",
    "evaluate", "evaluate_graph", "trace_graph", "EvaluationError", "NamedFn", "fn", "register_function", "size_case", "to_graph",
    "graph_to_json", "graph_from_json", "graph_to_dot", "graph_to_graphml", "size", "Size",
]
