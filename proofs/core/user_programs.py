"""The user's own RASP program, as ``attncert compile`` and the claims that take one read it.

Two sources, both read at compile or prove time only (a verifier reads a certificate's recorded
form and never these):

- ``--file F.rasp --expr NAME``: a program in attncert's RASP language, run by its bounded
  interpreter (:mod:`constructions.rasp.language`); NAME is the SOp to compile (default: the
  file's last statement).
- ``--program MODULE:FUNCTION`` or ``--program 'MODULE:FUNCTION(ARGS)'``: FUNCTION returns a RASP
  program: an attncert one (:mod:`constructions.rasp`) or a tracr one (``tracr.rasp.rasp``), which
  is rebuilt node for node as an attncert program with the same callables and labels
  (:mod:`constructions.tracr.program`). MODULE is a dotted module importable from the working
  directory, or a ``.py`` file. This runs the user's code (FUNCTION's).

**The arguments** (:func:`program_call`) are read by Python's ``ast`` and never evaluated as Python:
``ARGS`` is a comma-separated list of positional then ``NAME=VALUE`` arguments, where a VALUE is

    VALUE := tokens | indices | length              the RASP primitives (the module's own rasp's, else tracr's)
           | NUMBER | -NUMBER | STRING | True | False | None
           | [VALUE, ...] | (VALUE, ...)
           | VALUE OP VALUE                        OP one of == != < <= > >=, the RASP library's own
                                                   operator on a SOp (tokens == "x" is a Map)
           | FUNCTION2(ARGS)                       another function of the same MODULE

so ``tracr.compiler.lib:make_sort_unique(vals=tokens, keys=tokens)``,
``tracr.compiler.lib:make_frac_prevs(tokens == "x")`` and
``tracr.compiler.lib:make_sort(tokens, tokens, max_seq_len=5, min_key=1)`` name programs of tracr's
library. Anything else (an attribute, a subscript, a lambda, arithmetic) is one line.

Every failure of the user's side (no such file, module or name, a function that raises, a value
that is not a SOp) is one line.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import operator
import re
import sys
from pathlib import Path
from typing import Any, Callable

from attncert.exact import ParseError


def parse_vocab(s: str) -> list[Any]:
    """'a,b,c' -> ['a', 'b', 'c']; an item spelled as an integer ('1', '-2') is the integer."""
    items = [t.strip() for t in str(s).split(",")]
    if not items or any(not t for t in items):
        raise ParseError(f"expected a comma-separated vocabulary such as a,b,c, got {s!r:.60}")
    vocab = [int(t) if re.fullmatch(r"-?[0-9]+", t) else t for t in items]
    if len(set(map(repr, vocab))) != len(vocab):
        raise ParseError(f"the vocabulary {s!r:.60} names a token twice")
    return vocab


def refuse_input_count(count: int, max_inputs: int) -> None:
    """One line, before the work, when the exhaustive input set is over --max-inputs."""
    if count > max_inputs:
        raise ParseError(f"{count:,} input sequences, over the limit of {max_inputs:,} (raise it with --max-inputs)")


def program_spec(spec: str) -> tuple[str, str]:
    """MODULE:FUNCTION or MODULE:FUNCTION(ARGS) -> (MODULE, FUNCTION), or one line (the arguments are
    read by :func:`program_call`)."""
    head = _call_split(str(spec))[0]
    module, sep, function = head.rpartition(":")
    if not sep or not module or not function.isidentifier():
        raise ParseError(f"--program takes MODULE:FUNCTION or MODULE:FUNCTION(ARGS), got {spec!r:.60}")
    return module, function


def _call_split(spec: str) -> tuple[str, str | None]:
    """(MODULE:FUNCTION, "FUNCTION(ARGS)" or None): the arguments start at the first "(" after the last ":"
    that comes before any "(" (a module path holds no parenthesis)."""
    at = spec.find("(")
    if at < 0:
        return spec, None
    head = spec[:at]
    return head, head.rpartition(":")[2] + spec[at:]


#: The comparisons a VALUE OP VALUE argument may use: the RASP library's own operators on SOps.
_COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
#: The RASP primitives an argument may name.
_PRIMITIVES = ("tokens", "indices", "length")


def program_call(spec: str) -> tuple[Callable[..., Any], list[Any], dict[str, Any]]:
    """(FUNCTION, positional arguments, keyword arguments) for ``--program``: the arguments of
    MODULE:FUNCTION(ARGS) built from the grammar of the module docstring (never evaluated as Python),
    none for MODULE:FUNCTION. One line for anything outside the grammar."""
    module, function = program_spec(spec)
    fn = load_program(module, function)
    call = _call_split(str(spec))[1]
    if call is None:
        return fn, [], {}
    try:
        tree = ast.parse(call.strip(), mode="eval").body
    except SyntaxError as e:
        raise ParseError(f"--program {spec!r:.60}: the arguments do not parse ({e.msg})") from None
    if not isinstance(tree, ast.Call) or not isinstance(tree.func, ast.Name) or tree.func.id != function:
        raise ParseError(f"--program takes MODULE:FUNCTION(ARGS), got {spec!r:.60}")
    mod = sys.modules.get(getattr(fn, "__module__", ""), None)
    build = functools.partial(_argument, spec=str(spec), module=module, rasp=_rasp_of(mod))
    args = [build(a) for a in tree.args]
    kwargs = {}
    for k in tree.keywords:
        if k.arg is None:
            raise ParseError(f"--program {spec!r:.60}: **arguments are not read")
        kwargs[k.arg] = build(k.value)
    return fn, args, kwargs


def _rasp_of(mod: Any) -> Any:
    """The RASP library the module uses (its global ``rasp`` if it has the primitives), else tracr's, else attncert's."""
    own = getattr(mod, "rasp", None)
    if all(hasattr(own, p) for p in _PRIMITIVES):
        return own
    if importlib.util.find_spec("tracr") is not None:
        from tracr.rasp import rasp

        return rasp
    from attncert.constructions import rasp

    return rasp


def _argument(node: ast.AST, spec: str, module: str, rasp: Any) -> Any:
    """One VALUE of the grammar, built (a literal as itself, a primitive from ``rasp``, a call by calling
    that function of the module): nothing is evaluated as Python."""
    again = functools.partial(_argument, spec=spec, module=module, rasp=rasp)
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, (bool, int, float, str))):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float):
        return -node.operand.value
    if isinstance(node, ast.Name) and node.id in _PRIMITIVES:
        return getattr(rasp, node.id)
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [again(x) for x in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARISONS:
        left, right = again(node.left), again(node.comparators[0])
        return _COMPARISONS[type(node.ops[0])](left, right)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        fn = load_program(module, node.func.id)
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise ParseError(f"--program {spec!r:.60}: **arguments are not read")
            kwargs[k.arg] = again(k.value)
        return _called(f"{module}:{node.func.id}", fn, [again(a) for a in node.args], kwargs)
    shown = ast.unparse(node) if hasattr(ast, "unparse") else type(node).__name__
    raise ParseError(
        f"--program {spec!r:.60}: the argument {shown!r:.40} is outside what is read (tokens, indices, length, literals, "
        "lists, comparisons, calls of the module's functions; docs/tracr.md)"
    )


def _called(where: str, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    try:
        return fn(*args, **kwargs)
    except Exception as e:  # the user's code: any failure of it is theirs, reported in one line
        raise ParseError(f"{where}: the function raised {type(e).__name__}: {str(e)[:80]}") from None


def load_program(module: str, function: str) -> Callable[[], Any]:
    """The function FUNCTION of MODULE, a dotted module importable from here or a .py file (the
    user's own code, imported when a proof runs; a verifier never does this)."""
    try:
        if module.endswith(".py"):
            path = Path(module)
            loaded = importlib.util.spec_from_file_location(path.stem, path)
            if loaded is None or not path.is_file():
                raise ParseError(f"no Python file {module!r:.60}")
            mod = importlib.util.module_from_spec(loaded)
            loaded.loader.exec_module(mod)  # type: ignore[union-attr]
        else:
            if "" not in sys.path:
                sys.path.insert(0, "")
            mod = importlib.import_module(module)
    except ImportError as e:
        raise ParseError(f"cannot import {module!r:.60}: {e}") from None
    fn = getattr(mod, function, None)
    if not callable(fn):
        raise ParseError(f"{module} has no function {function!r:.40}")
    return fn


def call_program(spec: str) -> Any:
    """The program FUNCTION(ARGS) returns, for ``--program MODULE:FUNCTION[(ARGS)]``; an exception raised by
    the user's code is one line naming it."""
    fn, args, kwargs = program_call(spec)
    return _called(str(spec), fn, args, kwargs)


def attncert_program(program: Any, where: str) -> Any:
    """An attncert SOp for ``program``: itself if it is one, else a tracr program rebuilt node for node."""
    from attncert.constructions import rasp

    if isinstance(program, rasp.SOp):
        return program
    if type(program).__module__.startswith("tracr."):
        from attncert.constructions.tracr.program import from_tracr, to_rasp

        return to_rasp(from_tracr(program))
    raise ParseError(f"{where} gives a {type(program).__name__}, not a RASP SOp (attncert's or tracr's)")


def file_program(path: str, expr: str | None, text: str | None = None, files: Any = None) -> Any:
    """The SOp ``expr`` (default: the last statement) of a RASP-language program, run by attncert's
    interpreter under the file's portable name: the file's text (read from the disk, or ``text`` as
    recorded), its loads served by ``files`` (default: the disk)."""
    from attncert.constructions.rasp.language import session
    from attncert.constructions.rasp.language.sources import portable_name, read_source

    name = portable_name(path)
    value = session.program_value(read_source(name) if text is None else text, name, expr, files=files, expr_option="--expr")
    return attncert_program(value, f"{name}: {expr or 'its last statement'}")


def check_sources(file: str | None, expr: str | None, program: str | None) -> None:
    """One line for a program given twice (--file and --program) or an --expr without --file."""
    if file is not None and program is not None:
        raise ParseError("give --file F.rasp or --program MODULE:FUNCTION, not both")
    if expr is not None and file is None:
        raise ParseError("--expr names a SOp of a --file program")


def compile_program(sop: Any, vocab: list[Any], max_seq_len: int, lengths: str = "fixed", causal: bool = False) -> Any:
    """The exact compile of a user's program over categorical tokens (``compile_graph``, checked as
    every compile is), for exactly max_seq_len tokens or every length up to it (``lengths``), causal
    or not; the sequence length is checked against --max-positions before anything is built."""
    from attncert.constructions import rasp
    from attncert.constructions.compiler import compile_graph
    from attncert.exact.errors import LimitExceeded
    from attncert.exact.limits import current

    lim = current()
    if max_seq_len > lim.max_positions:
        raise LimitExceeded(f"--max-seq-len {max_seq_len:,} is over the limit of {lim.max_positions:,} positions (raise it with --max-positions if you mean it)")
    return compile_graph(rasp.to_graph(sop), max_seq_len, "categorical", vocab, lengths=lengths, causal=causal)
