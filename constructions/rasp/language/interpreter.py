"""Running RASP-language programs exactly: plain values are computed while the program is read,
sequence operations become nodes of the same RASP graphs as the Python API (:mod:`constructions.rasp`).

Numbers are exact rationals (``0.1 + 0.2 == 3/10``); means are exact; ``round`` rounds
half to even; ``b ^ x`` is exact for an integer x. Functions are closures over the
environment they are defined in, and may return several values. Errors are one line
with the source position.

A value that leaves the exact fields (``2 ^ (1/2)``) is an arb ball at the run's
precision ``prec``, and every comparison, truth test (``if``, ``and``, ``or``, ``not``),
``round``, ``%`` and membership test is the three-valued decision of
:mod:`exact.decide`: decided from the ball, and counted in the run's
:class:`~exact.decide.Decisions`, or :class:`Undecided`, naming the expression, so that
the caller may run the program again at a higher precision (:mod:`.session`). A ball
is never a dict key (whether two balls are one key is not decided).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flint import arb, ctx, fmpq
from lark import Token, Tree

from attncert.constructions import rasp
from attncert.constructions.rasp.expr import RASPExpr
from attncert.constructions.rasp.language.bounds import Budget, OverBudget, brief
from attncert.constructions.rasp.language.parser import parse
from attncert.constructions.rasp.language.sources import DiskFiles, Files
from attncert.exact import EE, QQ, EENumber, decide
from attncert.exact.domains import ENCLOSURE_BITS, in_smallest_domain, least_domain
from attncert.exact.errors import AttncertError, UndecidedError
from attncert.exact.limits import Limits

#: The constant e, which an --e-literal stands for.
E = EE.exp(fmpq(1))
#: How far an --e-literal may be from e: the paper's files write 2.718281828459045, 2.718 and 2.73.
E_LITERAL_TOLERANCE = fmpq(1, 10)

#: The token variants of the reference; they are one ``tokens`` SOp, and tell how input is read.
TOKEN_VARIANTS = ("tokens_str", "tokens_int", "tokens_float", "tokens_bool", "tokens_asis")
#: Names no program assigns, anywhere (the reference's reserved words). At a program's top level the
#: library's names are reserved too (:func:`top_level_reserved`); ``tokens`` may be rebound, as there.
RESERVED = frozenset(
    ("if", "else", "not", "and", "or", "out", "def", "return", "range", "for", "in", "zip", "len", "get", "indices", "True", "False")
    + TOKEN_VARIANTS
)


class RaspError(AttncertError):
    """A RASP program failed: an unknown name, a type error... One line, with the source position."""


class Undecided(RaspError, UndecidedError):
    """A comparison (or truth test, floor...) on a ball that the run's precision does not decide:
    one line with the source position and the expression."""


@dataclass
class Function:
    name: str
    params: list[str]
    body: list[Tree]
    returns: list[Tree]
    closure: "Env"
    source: str = "<input>"  # where it was defined: errors in its body point there
    text: str = ""  # the source text it was defined in (errors quote its expressions)


def public(name: str) -> bool:
    """Whether a loaded file's name is also set where it is loaded: not private (``_name``), not ``out``."""
    return not name.startswith("_") and name != "out"


@dataclass
class Env:
    values: dict[str, Any] = field(default_factory=dict)
    parent: "Env | None" = None
    #: Names that cannot be assigned here.
    reserved: frozenset[str] = RESERVED
    #: For a loaded file's environment, the loading one: the file's public names (:func:`public`)
    #: are set there too, so a file keeps its private names to itself.
    exports_to: "Env | None" = None

    def get(self, name: str) -> Any:
        env: Env | None = self
        while env is not None:
            if name in env.values:
                return env.values[name]
            env = env.parent
        raise KeyError(name)

    def refuses(self, name: str) -> bool:
        """Whether name is reserved here or in an environment the assignment would be exported to."""
        env: Env | None = self
        while env is not None:
            if name in env.reserved:
                return True
            env = env.exports_to if public(name) else None
        return False

    def set(self, name: str, value: Any) -> None:
        self.values[name] = value
        if self.exports_to is not None and public(name):
            self.exports_to.set(name, value)


@dataclass(frozen=True)
class Builtin:
    """A library function written in Python (the rest of the library comes as a .rasp prelude)."""

    name: str
    fn: Any
    #: Its parameters: (name, the type its argument must have, that type in words).
    params: tuple[tuple[str, type, str], ...] = ()


@dataclass(frozen=True)
class Draw:
    """A ``draw(program)`` or ``draw(program, example)`` statement that ran: what the REPL is to draw."""

    program: Any
    example: list[Any] | None
    #: The source text of the program's expression (names the picture).
    text: str


def kind_of(v: Any) -> str:
    """What a value is, in the language's words, for messages: 'a sequence', 'a selector', 'a number'..."""
    if isinstance(v, rasp.Selector):
        return "a selector"
    if isinstance(v, rasp.SOp):
        return "a sequence"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (fmpq, EENumber, arb, int)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, tuple):
        return f"{len(v)} values"  # a function's several results
    if isinstance(v, dict):
        return "a dict"
    if isinstance(v, (Function, Builtin)):
        return "a function"
    return "no value" if v is None else f"a {type(v).__name__}"


def builtins() -> Env:
    env = Env(
        {
            "True": True,
            "False": False,
            "indices": rasp.indices,
            "tokens": rasp.tokens,
            "length": rasp.numerical(rasp.length),
            "selector_width": Builtin("selector_width", lambda sel: rasp.numerical(rasp.SelectorWidth(sel)), (("sel", rasp.Selector, "a selector"),)),
        }
    )
    # tokens_asis is the input as given; the others convert each token as the reference does
    env.values.update({f"tokens_{k}": rasp.Map(rasp.fn("token_as", kind=k), rasp.tokens).named(f"tokens_{k}") for k in ("str", "int", "float", "bool")})
    env.values["tokens_asis"] = rasp.tokens
    return env


PRELUDE = Path(__file__).with_name("prelude.rasp")
#: Files one program may load.
MAX_LOADS = 100


@functools.lru_cache(maxsize=1)
def library() -> Env:
    """The builtins and the prelude, run once per process. Programs run in environments below it and
    never write into it (functions' locals are their own environments), so every program shares it."""
    env = builtins()
    # The prelude is ours, not the user's: it runs within the default limits, whatever a run's are.
    Interpreter("prelude.rasp", env, budget=Budget(Limits())).run(PRELUDE.read_text())
    del env.values["out"]  # the prelude's last value is no program's `out`
    return env


@functools.lru_cache(maxsize=1)
def top_level_reserved() -> frozenset[str]:
    """The names a program cannot assign at its top level: the reserved words and the library's names."""
    return RESERVED | (frozenset(library().values) - {"tokens"})


def program_env(exports_to: Env | None = None) -> Env:
    """A new top-level environment over the library (a program's, or a loaded file's)."""
    return Env({}, library(), top_level_reserved(), exports_to)


class Interpreter:
    def __init__(
        self,
        name: str = "<input>",
        env: Env | None = None,
        loaded: dict[str, Env | None] | None = None,
        e_literals: frozenset[fmpq] = frozenset(),
        files: Files | None = None,
        budget: Budget | None = None,
        prec: int = ENCLOSURE_BITS,
        decisions: decide.Decisions | None = None,
    ):
        """``env``: the environment to run in (default: a new one over the library); ``loaded``: the files
        loaded so far, each with its environment (None while it runs, so a load back to it ends a cycle); ``e_literals``: the values of the decimal
        literals that stand for the constant e (:func:`read_e_literal`; none by default); ``files``: where
        loads are read (default: the disk); ``budget``: what the run may still do (default: a new one within
        the limits in force; interpreters of one run share it); ``prec``: the bits of the balls a value
        that leaves the exact fields becomes; ``decisions``: where the run counts what it decided from
        balls."""
        self.name = name
        self.env = program_env() if env is None else env
        self.loaded: dict[str, Env | None] = {} if loaded is None else loaded
        self.e_literals = e_literals
        self.files = DiskFiles() if files is None else files
        self.budget = Budget() if budget is None else budget
        self.prec = prec
        self.decisions = decide.Decisions() if decisions is None else decisions
        #: The source text being run (that of ``name``), which error messages quote.
        self.text = ""
        #: The draw statements run, in order (the REPL draws them; elsewhere they only check their arguments).
        self.draws: list[Draw] = []
        #: The load statements run, in order: the file as written and the names each set (the REPL lists them).
        self.loads: list[tuple[str, list[str]]] = []
        #: Lines before the source being run (statements piped to the REPL report their lines in the input).
        self.line_offset = 0

    def derived(self, name: str, budget: Budget | None = None) -> "Interpreter":
        """An interpreter for more source in this one's environment and run (``--eval``, ``set example``):
        the same files, literals, precision and record of decisions; this run's budget unless one is given."""
        return Interpreter(name, self.env, self.loaded, self.e_literals, self.files, self.budget if budget is None else budget, self.prec, self.decisions)

    # -- statements -------------------------------------------------------------------------

    def run(self, source: str) -> list[tuple[str, Any]]:
        """Run a source text; the (name, value) of each expression statement and assignment, in order."""
        out: list[tuple[str, Any]] = []
        own = self.files.find(self.name)
        if own is not None:  # the file being run counts as loaded: a load back to it is a no-op
            self.loaded[own] = None
        self.budget.source(source, self.name)
        self.text = source
        try:
            with self.budget.python_stack(), decide.recording(self.decisions), ctx.workprec(self.prec):
                for st in parse(source, self.name, self.line_offset).children:
                    if isinstance(st, Token):  # a comment
                        continue
                    out += self.statement(st, self.env)
        except RecursionError:  # --max-recursion raised past what Python's own stack allows
            raise OverBudget(f"{self.name}: the RASP program nests deeper than Python's stack allows; lower --max-recursion") from None
        return out

    def statement(self, st: Tree, env: Env) -> list[tuple[str, Any]]:
        self.budget.enter()
        try:
            return self._statement(st, env)
        finally:
            self.budget.depth -= 1

    def _statement(self, st: Tree, env: Env) -> list[tuple[str, Any]]:
        kind = st.data
        if kind == "expr_statement":
            value = env.values["out"] = self.expr(st.children[0], env)  # `out` holds the last value, as in the reference
            return [("out", value)]
        if kind == "assign":
            names = [t.value for t in st.children[0].children]
            first = next(RASPExpr._ids)  # operations numbered after this one are built by this statement
            vals = self.exprs(st.children[1], env)
            env.values["out"] = vals[-1]
            if len(vals) == 1 and len(names) > 1 and isinstance(vals[0], (tuple, list)):
                vals = list(vals[0])  # a function's several results, or a list, unpack
            if len(vals) != len(names):
                raise self.error(st, f"{len(names)} names but {len(vals)} values")
            for n, v in zip(names, vals):
                self._assign(env, n, v, st)
                if isinstance(v, RASPExpr) and v.unique_id > first:
                    # tracr's .named(n), in place, so that graphs, drawings and evaluation errors show the program's
                    # names: the outermost assignment that built an operation names it (a function's result takes
                    # the caller's name); one built before (tokens, a value assigned again) keeps its own
                    v._annotations["name"] = n
            return list(zip(names, vals))
        if kind == "funcdef":
            name = st.children[0].value
            rest = [c for c in st.children[1:] if not isinstance(c, Token)]
            params = [t.value for t in rest[0].children] if rest[0].data == "ids" else []
            body = next(c for c in rest if c.data == "body")
            returns = next(c for c in rest if c.data == "exprs")
            for p in params:
                if p in RESERVED:
                    raise self.error(st, f"{p!r} is reserved: it cannot name a parameter")
            self._assign(env, name, Function(name, params, [c for c in body.children if isinstance(c, Tree)], returns.children, env, self.name, self.text), st)
            return []
        if kind == "forloop":
            names = [t.value for t in st.children[0].children]
            iterable = self.expr(st.children[1], env)
            for item in self._iterate(iterable, st):
                self._bind(names, item, env, st)
                for inner in st.children[2].children:
                    if isinstance(inner, Tree):
                        self.statement(inner, env)
            return []
        if kind == "load":
            return self._load(st, env)
        if kind == "draw":
            return self._draw(st, env)
        if kind in ("set_example", "show_example", "toggle_examples", "toggle_full_seq", "exit"):
            return []  # REPL display settings: no effect on values
        raise self.error(st, f"the statement {kind} is not supported yet")

    def _draw(self, st: Tree, env: Env) -> list[tuple[str, Any]]:
        """draw(program) or draw(program, example): recorded in :attr:`draws`, for the REPL to draw."""
        program = self.expr(st.children[0], env)
        if not isinstance(program, (rasp.SOp, rasp.Selector)):
            raise self.error(st, f"draw takes a sequence or a selector, not {kind_of(program)}")
        example = None
        if len(st.children) > 1:
            example = self.expr(st.children[1], env)
            if not isinstance(example, (str, list)):
                raise self.error(st.children[1], f"draw's example is a string or a list, not {kind_of(example)}")
        self.draws.append(Draw(program, None if example is None else list(example), self.snippet(st.children[0], None)))
        return []

    def _load(self, st: Tree, env: Env) -> list[tuple[str, Any]]:
        """load "lib"; runs lib.rasp (beside the loading file, or as given), once, as the reference does:
        in an environment of its own over the library (it does not see the loading program's names),
        whose public names (:func:`public`) are also set in the loading environment."""
        target = st.children[0].value[1:-1]
        here = Path(self.name).parent if self.name not in ("<input>", "<repl>", "--eval") else Path(".")
        candidates = (here / target, here / f"{target}.rasp", Path(target), Path(f"{target}.rasp"))
        key = next((name for name in map(self.files.find, map(str, candidates)) if name is not None), None)
        if key is None:
            raise self.error(st, f"cannot load {target!r}: no such file")
        if key in self.loaded:
            ran = self.loaded[key]
            if ran is not None:  # a file runs once: loaded again, its public names are set here as a second run would
                for name, value in ran.values.items():
                    if public(name):
                        self._assign(env, name, value, st)
                self._loaded(target, ran, env)
            return []
        if len(self.loaded) >= MAX_LOADS:
            raise self.error(st, f"more than {MAX_LOADS} files loaded")
        self.loaded[key] = None
        text = self.files.read(key)
        self.budget.source(text, key)
        caller, self.name, caller_text, self.text = self.name, key, self.text, text
        own = program_env(exports_to=env)
        try:
            for inner in parse(text, key).children:
                if isinstance(inner, Tree):
                    self.statement(inner, own)
        finally:
            self.name, self.text = caller, caller_text
        self.loaded[key] = own
        self._loaded(target, own, env)
        return []

    def _loaded(self, target: str, ran: Env, env: Env) -> None:
        """Record a load run where the program is (not one inside a loaded file): the names it set there."""
        if env is self.env:
            self.loads.append((target, sorted(filter(public, ran.values))))

    # -- expressions ------------------------------------------------------------------------

    def exprs(self, tree: Tree, env: Env) -> list[Any]:
        return [self.expr(c, env) for c in tree.children]

    def expr(self, t: Tree, env: Env) -> Any:
        k = t.data
        self.budget.enter()
        first = next(RASPExpr._ids)  # operations numbered after this one are built by this expression
        try:
            v = self.budget.value(getattr(self, f"_{k}")(t, env), k)
            if isinstance(v, RASPExpr) and v.unique_id > first and "source" not in v._annotations:
                # where the operation was written: an error while evaluating it names this place
                v._annotations["source"] = self.where(t)
            return v
        except (RaspError, OverBudget):  # a run over its budget stops with the budget's one line
            raise
        except UndecidedError as e:  # the innermost expression whose decision failed is named
            raise Undecided(f"{self.where(t)}: {self.snippet(t)}: {e}") from None
        except ZeroDivisionError:  # FLINT's and ours (ExactZeroDivision) alike: x / 0, x % 0
            raise self.error(t, "division by zero") from None
        except AttncertError as e:  # e.g. a power past the digit limit: the same message, with its place
            raise self.error(t, str(e)) from None
        except (TypeError, ValueError, ArithmeticError, KeyError, IndexError) as e:
            # operands are checked where they are used; what still escapes is said with its expression
            raise self.error(t, f"{self.snippet(t)}: {e}") from None
        finally:
            self.budget.depth -= 1

    def _var(self, t, env):
        name = t.children[0].value
        try:
            return env.get(name)
        except KeyError:
            raise self.error(t, f"unknown name {name!r}") from None

    def _int_literal(self, t, env):
        return fmpq(int(t.children[0].value))

    def _decimal_literal(self, t, env):
        q = QQ.convert(t.children[0].value)  # "0.1" is exactly 1/10
        return E if q in self.e_literals else q

    def _string_literal(self, t, env):
        return t.children[0].value[1:-1]

    def _list_literal(self, t, env):
        return self.exprs(t.children[0], env) if t.children else []

    def _dict_literal(self, t, env):
        return {self._key(self.expr(p.children[0], env), p): self.expr(p.children[1], env) for p in t.children}

    def _list_comp(self, t, env):
        val, ids, iterable = t.children
        names = [x.value for x in ids.children]
        out = []
        for item in self._iterate(self.expr(iterable, env), t):
            inner = Env({}, env)
            self._bind(names, item, inner, t)
            out.append(self.expr(val, inner))
        return out

    def _dict_comp(self, t, env):
        key, val, ids, iterable = t.children
        names = [x.value for x in ids.children]
        out = {}
        for item in self._iterate(self.expr(iterable, env), t):
            inner = Env({}, env)
            self._bind(names, item, inner, t)
            out[self._key(self.expr(key, inner), t)] = self.expr(val, inner)
        return out

    def _key(self, k: Any, t: Tree) -> Any:
        """A dict key: never a ball, since whether two balls are the same key is not decided."""
        if isinstance(k, arb):
            raise self.error(t, f"a ball ({decide.show(k)}) cannot be a dict key: equality of enclosures is not decided")
        return k

    def _range_call(self, t, env):
        args = [self._int(v, t) for v in self.exprs(t.children[0], env)]
        if not 1 <= len(args) <= 3:
            raise self.error(t, f"range takes 1 to 3 values, got {len(args)}")
        r = range(*args)
        self.budget.items(max(0, -((r.start - r.stop) // r.step)), "a range of {} elements")  # len(r), which a huge range overflows
        return [fmpq(i) for i in r]

    def _zip_call(self, t, env):
        return [list(x) for x in zip(*self.exprs(t.children[0], env))]

    def _len_call(self, t, env):
        v = self.expr(t.children[0], env)
        if not isinstance(v, (list, dict)):
            raise self.error(t, "len takes a list or a dict")
        return fmpq(len(v))

    def _index(self, t, env):
        """v[i]. A sequence indexed by a number reads that position (from the end if negative) at every
        position; a list, string or dict indexed by a sequence reads it elementwise."""
        v, i = self.expr(t.children[0], env), self.expr(t.children[1], env)
        if isinstance(v, rasp.SOp):
            if isinstance(i, rasp.SOp):
                raise self.error(t, "a sequence is indexed by a number, not by a sequence")
            k = self._int(i, t)
            return rasp.Aggregate(rasp.Select(rasp.indices, rasp.Full(k) if k >= 0 else rasp.length + k, rasp.Comparison.EQ), v, default=fmpq(0))
        if not isinstance(v, (list, str, dict)):
            raise self.error(t, f"only lists, strings, dicts and sequences can be indexed, not {kind_of(v)}")
        if isinstance(i, rasp.SOp):
            return rasp.Map(rasp.fn("index_table", entries=self._table(v, t)), i)
        if isinstance(v, dict):
            if not _plain(i):
                raise self.error(t, f"a dict is indexed by a number, string, boolean or sequence, not {kind_of(i)}")
            if self._key(i, t) not in v:
                raise self.error(t, f"the dict has no key {brief(i)}")
            return v[i]
        k = self._int(i, t)
        if not -len(v) <= k < len(v):
            raise self.error(t, f"index {k} is out of range for {kind_of(v)} of length {len(v)}")
        return v[k]

    def _table(self, v: list | str | dict, t: Tree) -> tuple[tuple[Any, Any], ...]:
        """A list, string or dict as (key, value) pairs; a list's or string's positions also count from the end."""
        pairs = list(v.items()) if isinstance(v, dict) else [(fmpq(i), x) for i, x in enumerate(v)] + [(fmpq(i - len(v)), x) for i, x in enumerate(v)]
        if not all(isinstance(x, (str, bool, fmpq, EENumber)) for _, x in pairs):
            raise self.error(t, "a list or dict indexed by a sequence must hold plain values (numbers, strings, booleans)")
        return tuple(pairs)

    def _call(self, t, env):
        f = self.expr(t.children[0], env)
        args = self.exprs(t.children[1], env) if len(t.children) > 1 else []
        if isinstance(f, (rasp.SOp, rasp.Selector)) and len(args) == 1:
            if not isinstance(args[0], (str, list)):
                raise self.error(t, f"{kind_of(f)} applies to an input, a string or a list, not {kind_of(args[0])}")
            return self.budget.evaluate(f, args[0], self.prec)  # applying a sequence operation or selector to an input
        return self._invoke(f, args, t)

    def _invoke(self, f: Any, args: list[Any], t: Tree) -> Any:
        """A RASP function or builtin applied to argument values (called at t)."""
        if isinstance(f, Function):
            if len(args) != len(f.params):
                raise self.error(t, f"{f.name} takes {_count(len(f.params), 'argument')}, got {len(args)}")
            local = Env(dict(zip(f.params, args)), f.closure)
            caller, self.name, caller_text, self.text = self.name, f.source, self.text, f.text
            try:
                for st in f.body:
                    self.statement(st, local)
                res = [self.expr(r, local) for r in f.returns]
            except RaspError as e:  # the same kind of error (an Undecided stays one), with the call's place
                raise type(e)(f"{e} (in {f.name}, called at {caller}:{t.meta.line}:{t.meta.column})") from None
            finally:
                self.name, self.text = caller, caller_text
            return res[0] if len(res) == 1 else tuple(res)
        if isinstance(f, Builtin):
            if len(args) != len(f.params):
                raise self.error(t, f"{f.name} takes {_count(len(f.params), 'argument')}, got {len(args)}")
            for (name, type_, words), a in zip(f.params, args):
                if not isinstance(a, type_):
                    raise self.error(t, f"{f.name} takes {words} as {name}, not {kind_of(a)}")
            return f.fn(*args)
        raise self.error(t, "only functions are called (and sequences and selectors, on one input)")

    def _select(self, t, env):
        keys, queries = (self._sop(self.expr(c, env), c) for c in t.children[:2])
        op = {"==": "EQ", "!=": "NEQ", "<": "LT", "<=": "LEQ", ">": "GT", ">=": "GEQ"}[t.children[2].value]
        return rasp.Select(keys, queries, rasp.Comparison[op])

    def _aggregate(self, t, env):
        sel, seq = self.expr(t.children[0], env), self._sop(self.expr(t.children[1], env), t.children[1])
        # Where a query selects nothing the reference gives 0 unless told otherwise.
        default = self.expr(t.children[2], env) if len(t.children) > 2 else fmpq(0)
        if not isinstance(sel, rasp.Selector):
            raise self.error(t, "aggregate expects a selector first")
        if isinstance(default, (rasp.SOp, rasp.Selector)):
            raise self.error(t, "the default of aggregate is a plain value, not a sequence or selector")
        return rasp.Aggregate(sel, seq, default=default)

    def _ternary(self, t, env):
        """a if cond else b: elementwise for a sequence condition; otherwise only the branch taken runs."""
        cond = self.expr(t.children[1], env)
        if isinstance(cond, rasp.Selector):
            raise self.error(t, "the condition of 'x if c else y' is a selector; it must be a value or a sequence")
        if isinstance(cond, rasp.SOp):
            a, b = self.expr(t.children[0], env), self.expr(t.children[2], env)
            packed = rasp.SequenceMap(rasp.fn("pack"), cond, self._sop(a, t.children[0]))
            return rasp.SequenceMap(rasp.fn("choose"), packed, self._sop(b, t.children[2]))
        return self.expr(t.children[0] if decide.truth(cond) else t.children[2], env)

    def _contained_in(self, t, env):
        """x in c: elementwise for a sequence x and a list c; for a value x and a sequence c, whether
        some position of c holds x (the library's contains, at every position)."""
        x, container = self.expr(t.children[0], env), self.expr(t.children[1], env)
        if isinstance(x, rasp.SOp):
            if not isinstance(container, list) or any(isinstance(v, (rasp.SOp, rasp.Selector, list, dict)) for v in container):
                raise self.error(t, "'sequence in X' needs X to be a list of plain values")
            return rasp.Map(rasp.fn("in_values", values=tuple(container)), x)
        if isinstance(container, rasp.SOp):
            if not _plain(x):
                raise self.error(t, f"'in' is not defined between {kind_of(x)} and {kind_of(container)}")
            return self._invoke(library().get("contains"), [container, x], t)
        if not isinstance(container, (list, dict, str)) or isinstance(x, (rasp.Selector, Function, Builtin)) or (isinstance(container, str) and not isinstance(x, str)):
            raise self.error(t, f"'in' is not defined between {kind_of(x)} and {kind_of(container)}")
        self.budget.operands(x, container)
        return decide.contains(container, x)

    # unary
    def _neg(self, t, env):
        v = self.expr(t.children[0], env)
        if isinstance(v, rasp.SOp):
            return rasp.Map(rasp.fn("neg"), v)
        if not isinstance(v, (fmpq, EENumber, arb, bool)):
            raise self.error(t, f"'-' is not defined for {kind_of(v)}")
        return -v

    def _pos(self, t, env):
        return self.expr(t.children[0], env)

    def _not_(self, t, env):
        v = self.expr(t.children[0], env)
        if isinstance(v, rasp.Selector):
            return rasp.selector_not(v)
        return ~v if isinstance(v, rasp.SOp) else not decide.truth(v)

    def _round_(self, t, env):
        v = self.expr(t.children[0], env)
        if isinstance(v, rasp.SOp):
            return rasp.Map(rasp.fn("round_half_even"), v)
        if not isinstance(v, (fmpq, EENumber, arb)):
            raise self.error(t, f"round takes a number or a sequence, not {kind_of(v)}")
        return fmpq(decide.round_half_even(v))

    def _indicator(self, t, env):
        v = self.expr(t.children[0], env)
        if not isinstance(v, rasp.SOp):
            raise self.error(t, "indicator expects a sequence")
        return rasp.numerical(rasp.Map(rasp.fn("indicator"), v))

    # binary
    def _binary(self, t, env, symbol: str, op):
        """``a symbol b`` computed by ``op``. Arithmetic and comparisons take two plain values, or a sequence
        and a plain value or sequence (elementwise); never a selector or a function (``and``, ``or``:
        :meth:`_logic`). Operand types that Python refuses are said as the language's types."""
        a, b = (self.expr(c, env) for c in t.children)
        self.budget.operands(a, b)
        if symbol not in ("and", "or"):
            sequence = isinstance(a, rasp.SOp) or isinstance(b, rasp.SOp)
            if any(isinstance(v, (rasp.Selector, Function, Builtin)) or (sequence and not isinstance(v, rasp.SOp) and not _plain(v)) for v in (a, b)):
                raise self.error(t, f"'{symbol}' is not defined between {kind_of(a)} and {kind_of(b)}")
        try:
            return op(a, b)
        except TypeError:  # two plain values of types the operation does not take
            raise self.error(t, f"'{symbol}' is not defined between {kind_of(a)} and {kind_of(b)}") from None

    def _add(self, t, env):
        # "s" + seq must prepend "s": made a sequence, it is the first operand of the elementwise +
        return self._binary(t, env, "+", lambda a, b: (rasp.Full(a) if isinstance(a, str) and isinstance(b, rasp.SOp) else a) + b)

    def _sub(self, t, env):
        return self._binary(t, env, "-", lambda a, b: a - b)

    def _mul(self, t, env):
        return self._binary(t, env, "*", lambda a, b: a * b)

    def _div(self, t, env):
        return self._binary(t, env, "/", lambda a, b: a / b)

    def _mod(self, t, env):
        def mod(a, b):
            if isinstance(b, rasp.SOp):
                return rasp.SequenceMap(rasp.fn("mod"), self._sop(a, t), b)
            if isinstance(a, rasp.SOp):
                return rasp.Map(rasp.fn("mod_const", k=b), a)
            return a - b * decide.floor(a / b)

        return self._binary(t, env, "%", mod)

    def _pow(self, t, env):
        """``a ^ b``. Exact for an integer b, for exact rational roots and for e^q (e given by an
        --e-literal); a plain value that leaves the exact fields becomes a Ball enclosure, and a
        sequence's power is evaluated in the smallest domain that holds it (session.evaluate)."""

        def power(a, b):
            if isinstance(a, EENumber) and a == E:
                return rasp.numerical(rasp.Map(rasp.fn("exp"), b)) if isinstance(b, rasp.SOp) else self._smallest(lambda d: d.exp(b), b)
            if isinstance(a, rasp.SOp) and isinstance(b, rasp.SOp):
                return rasp.numerical(rasp.SequenceMap(rasp.fn("power"), a, b))
            if isinstance(a, rasp.SOp):
                return rasp.numerical(rasp.Map(rasp.fn("pow_const", k=b), a))
            if isinstance(b, rasp.SOp):
                return rasp.numerical(rasp.Map(rasp.fn("pow_base", b=a), b))
            if not all(isinstance(v, (fmpq, EENumber, arb)) for v in (a, b)):
                raise TypeError("a power of plain values takes two numbers")
            return self._smallest(lambda d: d.power(a, b), a, b)

        return self._binary(t, env, "^", power)

    def _smallest(self, compute: Any, *operands: Any) -> Any:
        """compute(D) in the first of QQ, EE, Ball(prec) that holds the operands and the result."""
        return in_smallest_domain(compute, self.prec, least_domain(operands))[0]

    def _compare(self, t, env, op: str):
        def compare(a, b):
            if isinstance(a, rasp.SOp) and isinstance(b, rasp.SOp):
                return rasp.SequenceMap(rasp.fn("compare", op=op), a, b)
            if isinstance(a, rasp.SOp) or isinstance(b, rasp.SOp):
                return _COMPARISONS[op](a, b)  # with one sequence, its overloads build the map
            return decide.compare(op, a, b)

        return self._binary(t, env, op, compare)

    def _eq(self, t, env):
        return self._compare(t, env, "==")

    def _lt(self, t, env):
        return self._compare(t, env, "<")

    def _le(self, t, env):
        return self._compare(t, env, "<=")

    def _gt(self, t, env):
        return self._compare(t, env, ">")

    def _ge(self, t, env):
        return self._compare(t, env, ">=")

    def _logic(self, t, env, op: str):
        """and / or: of two selectors, a selector; with a sequence, elementwise by truth (a boolean
        sequence, as in the reference); of plain values, Python's and / or."""

        def logic(a, b):
            selectors = isinstance(a, rasp.Selector) + isinstance(b, rasp.Selector)
            if selectors == 2:
                return a & b if op == "and" else a | b
            if selectors == 1:
                raise self.error(t, f"'{op}' between a selector and a non-selector")
            if isinstance(a, rasp.SOp) or isinstance(b, rasp.SOp):
                return rasp.SequenceMap(rasp.fn(f"logical_{op}"), self._sop(a, t), self._sop(b, t))
            if op == "and":
                return b if decide.truth(a) else a
            return a if decide.truth(a) else b

        return self._binary(t, env, op, logic)

    def _and_(self, t, env):
        return self._logic(t, env, "and")

    def _or_(self, t, env):
        return self._logic(t, env, "or")

    # -- helpers --------------------------------------------------------------------------------

    def _sop(self, v: Any, t: Tree) -> rasp.SOp:
        """A sequence operation, or a plain value made one (``select(indices, 0, ==)``)."""
        if isinstance(v, rasp.SOp):
            return v
        if not _plain(v):
            raise self.error(t, f"expected a sequence or a plain value (a number, string or boolean), not {kind_of(v)}")
        return rasp.Full(v)

    def _int(self, v: Any, t: Tree) -> int:
        if isinstance(v, fmpq) and v.q == 1:
            return int(v.p)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        raise self.error(t, f"expected an integer, got {brief(v) if _plain(v) else kind_of(v)}")

    def _iterate(self, v: Any, t: Tree) -> list[Any]:
        if isinstance(v, (dict, list)):
            self.budget.charge(len(v))  # the loop's iterations
            return list(v) if isinstance(v, dict) else v
        raise self.error(t, "for loops and comprehensions iterate over lists and dicts")

    def _bind(self, names: list[str], item: Any, env: Env, t: Tree) -> None:
        if len(names) == 1:
            self._assign(env, names[0], item, t)
            return
        items = list(item) if isinstance(item, (list, tuple)) else None
        if items is None or len(items) != len(names):
            raise self.error(t, f"cannot unpack {brief(item)} into {len(names)} names")
        for n, v in zip(names, items):
            self._assign(env, n, v, t)

    def _assign(self, env: Env, name: str, value: Any, t: Tree) -> None:
        if env.refuses(name):
            raise self.error(t, f"{name!r} is reserved: it cannot be assigned")
        env.set(name, value)

    def where(self, t: Any) -> str:
        """file:line:column of a parse-tree node (the file alone if the node has no position)."""
        meta = getattr(t, "meta", None)
        return f"{self.name}:{meta.line + self.line_offset}:{meta.column}" if meta is not None and not getattr(meta, "empty", True) else self.name

    def snippet(self, t: Any, most: int | None = 60) -> str:
        """The source text of a parse-tree node, on one line and at most ``most`` characters ("" if unknown)."""
        meta = getattr(t, "meta", None)
        if meta is None or getattr(meta, "empty", True):
            return ""
        words = " ".join(self.text[meta.start_pos : meta.end_pos].split())
        return words if most is None or len(words) <= most else words[: most - 3] + "..."

    def error(self, t: Any, message: str) -> RaspError:
        return RaspError(f"{self.where(t)}: {message}")


def read_e_literal(text: str) -> fmpq:
    """The value of an --e-literal option: a decimal literal (with a point) within 1/10 of e.

    Reading it as e is a choice the user makes explicitly and that every output records;
    a literal far from e (``3.0``) is refused, since reading it as e would change the program.
    """
    from attncert.exact.errors import ParseError

    if "." not in text:
        raise ParseError(f"--e-literal {text!r}: expected a decimal literal such as 2.718281828459045")
    q = QQ.convert(text)
    if not (decide.compare("<", E - q, E_LITERAL_TOLERANCE) and decide.compare("<", q - E, E_LITERAL_TOLERANCE)):  # exact, in EE
        raise ParseError(f"--e-literal {text}: not within {E_LITERAL_TOLERANCE} of e = 2.71828..., so it cannot stand for e")
    return q


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _plain(v: Any) -> bool:
    """Whether v is a plain value a sequence can hold at a position: a number, a string or a boolean."""
    return isinstance(v, (fmpq, EENumber, arb, str, bool, int))


_COMPARISONS = {"==": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


