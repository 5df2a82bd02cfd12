"""The argparse machinery every verb shares: the parser with one-line errors and suggestions, negative
values glued to their options, options given once, the limit options, a claim's options and sizes."""

from __future__ import annotations

import argparse
import copy
import re
import sys
from dataclasses import fields, replace
from typing import Any, Callable, Sequence

from attncert.exact.errors import ParseError
from attncert.exact.limits import Limits, limit_problem
from attncert.proofs.core.params import positive_int, size_values
from attncert.proofs.core.registry import flag

EXIT_HOLDS, EXIT_FAILS, EXIT_BAD_INPUT = 0, 1, 2


#: The title of the section of limit options, which --help prints after the verb's own options.
LIMITS_TITLE = "limits (docs/limits.md; each bounds what one run may do)"


class Formatter(argparse.HelpFormatter):
    """Help in one spelling: an option's underscore alias (``--max_seq_len``, still accepted) is not shown beside
    its kebab-case name; the limit options stand in the usage line as one ``[--max-LIMIT N]``."""

    def _format_action_invocation(self, action: argparse.Action) -> str:
        if action.option_strings:
            shown = [o for o in action.option_strings if "_" not in o or o.replace("_", "-") not in action.option_strings]
            action = copy.copy(action)
            action.option_strings = shown
        return super()._format_action_invocation(action)

    def add_usage(self, usage: Any, actions: Any, groups: Any, prefix: Any = None) -> None:
        kept = [a for a in actions if not getattr(a, "limit", False)]
        if usage is None and len(kept) < len(actions):
            kept.append(argparse.Action(["--max-LIMIT"], dest="limits", metavar="N"))
        super().add_usage(usage, kept, groups, prefix)


class Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # No abbreviations: `--see 3` is a typo to report, not `--seed 3`.
        super().__init__(*args, **{"formatter_class": Formatter, **kwargs, "allow_abbrev": False})

    def format_help(self) -> str:
        # the limits after the verb's own options, whichever section was added last
        groups = self._action_groups
        self._action_groups = [g for g in groups if g.title != LIMITS_TITLE] + [g for g in groups if g.title == LIMITS_TITLE]
        try:
            return super().format_help()
        finally:
            self._action_groups = groups

    def error(self, message: str) -> None:  # one line, exit 2 (argparse prints usage too)
        if len(message) > 200:  # the choices of "invalid choice" are every claim: the suggestion says more
            message = re.sub(r" \(choose from .*\)$", "", message)
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}{_suggestion(self, message)}\n")

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        return super().parse_known_args(_glue_negative_values(sys.argv[1:] if args is None else list(args)), namespace)


_NEGATIVE = re.compile(r"^-[0-9.]")
_INVALID_CHOICE = re.compile(r"invalid choice: '([^']*)'")
_UNRECOGNIZED = re.compile(r"unrecognized arguments: (--?[^\s=]+)")


def _options_on_path(parser: argparse.ArgumentParser, words: Sequence[str | None]) -> set[str]:
    """The option strings of the parser and of the subparsers that ``words`` (verb, claim) choose:
    what a mistyped option on this command line could have meant."""
    found: set[str] = set()
    for action in parser._actions:
        found.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction) and words and words[0] in action.choices:
            found |= _options_on_path(action.choices[words[0]], words[1:])
    return found


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """"; did you mean X?" for a misspelt verb, claim or option, else nothing."""
    import difflib

    if m := _INVALID_CHOICE.search(message):
        choices = next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None) or ()
        near = difflib.get_close_matches(m.group(1), list(choices), n=3)
    elif m := _UNRECOGNIZED.search(message):
        near = difflib.get_close_matches(m.group(1), sorted(_options_on_path(parser, getattr(parser, "words", ()))), n=3)
    else:
        near = []
    return f"; did you mean {' or '.join(near)}?" if near else ""


def _glue_negative_values(argv: list[str]) -> list[str]:
    """``--eps -1/10`` -> ``--eps=-1/10``: a value that starts with a minus is a value, not an option,
    so that the claim can answer "eps must be > 0" instead of argparse "expected one argument"."""
    out: list[str] = []
    for tok in argv:
        if out and _NEGATIVE.match(tok) and out[-1].startswith("--") and "=" not in out[-1]:
            out[-1] = f"{out[-1]}={tok}"
        else:
            out.append(tok)
    return out


class Once(argparse.Action):
    """Store an option's value, refusing a second occurrence (``--n 2 --n 3`` is a mistake, not a choice)."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        seen = namespace.__dict__.setdefault("_given", set())
        if self.dest in seen:
            parser.error(f"{option_string} given twice; give each option once")
        seen.add(self.dest)
        setattr(namespace, self.dest, values)


#: Limit options (docs/limits.md), as (flag, Limits field, what it bounds): what a claim's cost model is
#: checked against; what a document may hold; what one run of a RASP-language program may do.
COST_LIMITS = (
    ("--max-positions", "max_positions", "longest RASP sequence"),
    ("--max-pairs", "max_pairs", "selection pairs in one attention layer"),
    ("--max-evaluations", "max_evaluations", "sequences (words, cases) or Sinkhorn runs in one claim"),
    ("--max-precision", "max_precision", "arb precision of a Sinkhorn run or of a RASP-language run's balls, in bits"),
    ("--max-memory", "max_memory", "bytes a run is predicted to need (docs/limits.md)"),
    ("--max-symbolic-terms", "max_symbolic_terms", "polynomial terms a for-all-inputs proof is estimated to hold (docs/identity.md)"),
)
DOCUMENT_LIMITS = (
    ("--max-bytes", "max_bytes", "largest document"),
    ("--max-digits", "max_digits", "digits per numerator/denominator (also Python's integer-string limit)"),
    ("--max-exponent", "max_exponent", "largest |q| in e^q"),
    ("--max-entries", "max_entries", "entries per matrix, elements of one RASP value"),
    ("--max-nodes", "max_nodes", "nodes in one recorded RASP graph"),
    ("--max-terms", "max_terms", "terms per EE numerator or denominator"),
)
SWEEP_LIMITS = (("--max-tasks", "max_tasks", "tasks (certificates) in one sweep, counted before any is run"),)
RASP_LIMITS = (
    ("--max-steps", "max_steps", "steps of a RASP program: statements, expressions, loop iterations, elements built, positions evaluated"),
    ("--max-recursion", "max_recursion", "nested evaluations in a RASP program: function calls, levels of nested expressions"),
    ("--max-source", "max_source", "characters of RASP source in one run: the program, the files it loads, the expression"),
    *DOCUMENT_LIMITS[1:4],
    *COST_LIMITS[:2],
    COST_LIMITS[3],
)


def option(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    """``parse`` as an option's type, its ParseError shown as it is (argparse would say only "invalid value")."""

    def read(text: str) -> Any:
        try:
            return parse(text)
        except ParseError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    read.__name__ = getattr(parse, "__name__", "value")
    return read


def _limit(field: str) -> Callable[[str], int]:
    """The type of a limit option: a positive integer within the limit's ceiling (exact/limits.py)."""

    def read(text: str) -> int:
        value = positive_int(text)
        problem = limit_problem(field, value)
        if problem is not None:
            raise ParseError(problem)
        return value

    return option(read)


#: Defaults that depend on the machine, said in words so that --help reads the same on every call.
_DEFAULT_SHOWN = {"max_memory": "this machine's available memory"}


def add_limits(sp: argparse.ArgumentParser, *groups: tuple[tuple[str, str, str], ...]) -> None:
    """The limit options of these groups (each once), defaults from Limits, in their own section of --help."""
    d = Limits()
    section = sp.add_argument_group(LIMITS_TITLE)
    for option_, field, what in dict.fromkeys(o for g in groups for o in g):
        shown = _DEFAULT_SHOWN.get(field, getattr(d, field))
        action = section.add_argument(option_, dest=field, metavar="N", type=_limit(field), action=Once, default=getattr(d, field), help=f"{what} (default {shown})")
        action.limit = True  # type: ignore[attr-defined]  # shown as one [--max-LIMIT N] in the usage line (Formatter)


def limits_of(args: argparse.Namespace) -> Limits:
    """The limits that the options give (the defaults for the rest)."""
    return replace(Limits(), **{f.name: getattr(args, f.name) for f in fields(Limits) if hasattr(args, f.name)})


def flags(name: str) -> list[str]:
    """--max-length, and --max_length as an alias (accepted, not shown in --help)."""
    return [f"--{name.replace('_', '-')}"] + ([f"--{name}"] if "_" in name else [])


def with_default(help_: str, default: Any) -> str:
    """The help text with its default said once: not again where the text says it, nor for none."""
    return help_ if "default" in help_ or default in (None, "") else f"{help_} (default: {default})"


def claim_options(cp: Any, params: Sequence[Any]) -> None:
    for prm in params:
        if prm.type is flag:  # a switch: present or not
            cp.add_argument(*flags(prm.name), dest=prm.name, action="store_true", help=prm.help)
            continue
        cp.add_argument(*flags(prm.name), dest=prm.name, type=option(prm.type), default=prm.default, action=Once, help=with_default(prm.help, prm.default))


# Sizes have one spelling on every verb, in two forms: --n 4 --d 3 (a claim's parameters, or a compiled
# construction's sizes) and --sizes n=4,d=3 (proofs.core.params.size_values). For sweep a size takes several
# values, a task each (--n 2,3 or --sizes n=2,3); elsewhere the values after NAME= are its one value's text.
SIZE = "size__"  # the dest prefix of a construction's (compile, the compiled claims) or a sweep's size options


def sizes_option(cp: argparse.ArgumentParser, example: str = "n=4,d=3") -> None:
    cp.add_argument("--sizes", dest="size_spec", metavar="NAME=V,...", action=Once, help=f"the same as --NAME V for each, e.g. {example}")


def _compiles(params: Sequence[Any]) -> bool:
    """Whether a claim's parameters name a construction and its sizes (the compiled claims): its own --sizes
    is the construction's, and the construction's sizes are options too."""
    return {"of", "sizes"} <= {p.name for p in params}


def construction_size_options(cp: argparse.ArgumentParser, of: str | None) -> None:
    """--NAME for each size of the construction ``of`` (an unknown one is refused when the verb runs)."""
    from attncert.proofs.compiled import construction as compiled

    try:
        declared = compiled.size_params(of or "")
    except ParseError:
        return
    for prm in declared.values():
        cp.add_argument(*flags(prm.name), dest=SIZE + prm.name, metavar="V", type=option(prm.type), action=Once, help=f"{prm.help} (default: {prm.default}; also --sizes {prm.name}=V)")


def construction_sizes(args: argparse.Namespace) -> str:
    """The construction's sizes as one text for proofs.compiled.construction.parse_sizes: --sizes and the --NAME options."""
    given = {k[len(SIZE) :]: v for k, v in vars(args).items() if k.startswith(SIZE) and v is not None}
    spelt = size_values(args.sizes) if str(args.sizes).strip() else {}
    for name in given.keys() & spelt.keys():
        raise ParseError(f"--sizes {name}=... and --{name} both give {name}; give it once")
    return ",".join([t for t in [str(args.sizes).strip()] if t] + [f"{k}={v}" for k, v in given.items()])


def resolve_sizes(args: argparse.Namespace, params: Sequence[Any]) -> None:
    """Apply --sizes NAME=V,... to the parameters as --NAME V would (each once); a compiled claim's
    construction sizes (--NAME) join its own --sizes."""
    if _compiles(params):
        args.sizes = construction_sizes(args)
        return
    spec = getattr(args, "size_spec", None)
    if spec is None:
        return
    declared = {p.name: p for p in params}
    given = args.__dict__.setdefault("_given", set())
    for name, values in size_values(spec).items():
        if name not in declared:
            raise ParseError(f"--sizes: {args.claim} has no parameter {name!r} (it takes {', '.join(declared) or 'none'})")
        if name in given:
            raise ParseError(f"--sizes {name}=... and --{name} both give {name}; give it once")
        setattr(args, name, declared[name].type(",".join(values)))
        given.add(name)


def claim_size_options(cp: argparse.ArgumentParser, params: Sequence[Any], argv: Sequence[str]) -> None:
    """The second form of a claim's sizes: --sizes, or for a compiled claim the construction's --NAME."""
    if _compiles(params):
        default = next(p.default for p in params if p.name == "of")
        construction_size_options(cp, _value_of(argv, "--of") or default)
    else:
        sizes_option(cp)


def _value_of(argv: Sequence[str], option: str) -> str | None:
    """The value given to ``option`` in ``argv`` (``--of X`` or ``--of=X``), if any."""
    for i, tok in enumerate(argv):
        if tok == option and i + 1 < len(argv):
            return argv[i + 1]
        if tok.startswith(option + "="):
            return tok[len(option) + 1 :]
    return None
