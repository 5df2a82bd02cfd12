r"""Coverage: the cases cover every size, and in each case the regions cover the output block and the rest.

**Cases.** Each case is reached from the sizes given by a path of splits on a size s and an integer
c: ``{"fix": s, "value": c}`` (s = c) or ``{"differs": s, "value": c}`` (s != c). The paths must form
a complete tree: no path is a prefix of another or repeated, and wherever paths branch they branch
into exactly the two sides of one split. Every size assignment then follows exactly one path.

**Regions.** In a case, the output block is the positions t = i c_out + j, 0 <= i < r_out,
0 <= j < c_out (a digit whose range is 1 is 0), and the *rest* r_out c_out <= t < N. Each region
is reached from its kind's whole region by a path of

* ``{"assume": rel}``: the region where rel holds; the tree must branch into rel and its negation;
* ``{"refine": d, "radix": R, "residue": e}``: the digit d (0 <= d < B) written R dq + e with a new
  digit dq (0 <= dq < B') for each e = 0, ..., R - 1 (R a constant >= 1), or, with residue null,
  R dq + dr with new digits dq < B' and dr < R (R >= 1 at every size); the relations assumed are
  rewritten and 0 <= (the new form) < B assumed. B' is E / R for the first E that R divides exactly, of B
  and the relations a d < a E assumed (a >= 1 a monomial in the sizes), else B (:func:`quotient_bound`). Every d in [0, B) is
  R (d // R) + d mod R with d // R <= d < B, and d // R < E / R where d < E = R (E / R), so the
  branches cover the region.

Following a path from the root gives the region's context (digits and relations, in the record's
order), its position and its output entry (:func:`follow`); the recorded ones must be these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Hashable

from attncert.exact import ParseError
from attncert.proofs.checkers.every_size.context import ZERO, Context
from attncert.proofs.checkers.every_size.record import Refusal
from attncert.proofs.checkers.every_size.sizes import Poly, Rel, nonnegative_polynomial, parse_rel, parse_size, symbol_name
from attncert.proofs.checkers.reading import whole


@dataclass(frozen=True)
class Place:
    """A region's context, position and output entry (None for the rest)."""

    ctx: Context
    pos: Poly
    entry: tuple[Poly, Poly] | None


def output_root(base: Context, rows: Poly, cols: Poly, stride: Poly) -> Place:
    """The entries (i, j), 0 <= i < rows, 0 <= j < cols, of the output block, entry (i, j) at i stride + j."""
    ctx = base
    for name, bound in (("i", rows), ("j", cols)):
        if bound.constant() != 1:
            ctx = ctx.with_digit(name, bound)
    i = Poly.symbol("i") if rows.constant() != 1 else ZERO
    j = Poly.symbol("j") if cols.constant() != 1 else ZERO
    return Place(ctx, i * stride + j, (i, j))


def rest_root(base: Context, rows: Poly, cols: Poly, N: Poly) -> Place:
    t = Poly.symbol("t")
    return Place(base.with_digit("t", N).assuming(Rel("<=", rows * cols, t)), t, None)


def read_region_step(obj: Any) -> tuple:
    """A region path's step as a tuple: ("assume", rel text) or ("refine", digit, radix text, residue)."""
    if isinstance(obj, dict) and set(obj) == {"assume"} and isinstance(obj["assume"], str):
        return ("assume", parse_rel(obj["assume"]).text)
    if isinstance(obj, dict) and set(obj) == {"refine", "radix", "residue"}:
        e = obj["residue"]
        if not (e is None or whole(e)):
            raise ParseError("a refinement's residue is an integer or null")
        return ("refine", symbol_name(obj["refine"], "a refined digit"), parse_size(obj["radix"]).text(), e)
    raise ParseError("a region's path step is {assume} or {refine, radix, residue}")


def follow(place: Place, step: tuple) -> Place:
    """The place a path step leads to (module docstring); Refusal for a digit the region does not have."""
    if step[0] == "assume":
        return Place(place.ctx.assuming(parse_rel(step[1])), place.pos, place.entry)
    _, d, radix, e = step
    digits = dict(place.ctx.digits)
    if d not in digits:
        raise Refusal(f"the refined digit {d} is not a digit of the region")
    R = parse_size(radix)
    q, r = f"{d}q", f"{d}r"
    if q in place.ctx.names() or r in place.ctx.names():
        raise Refusal(f"refining {d} names {q} or {r}, already names of the region")
    top = quotient_bound(d, digits[d], R, place.ctx.assumed, place.ctx.sizes)
    if e is None:
        by, new = R * Poly.symbol(q) + Poly.symbol(r), ((q, top), (r, R))
    else:
        by, new = R * Poly.symbol(q) + Poly.const(e), ((q, top),)
    m = {d: by}
    entry = None if place.entry is None else (place.entry[0].substitute(m), place.entry[1].substitute(m))
    return Place(place.ctx.substitute(d, by, new), place.pos.substitute(m), entry)


def quotient_bound(d: str, bound: Poly, R: Poly, assumed: tuple[Rel, ...], sizes: tuple[str, ...]) -> Poly:
    """The bound of the quotient digit of d = R dq + (remainder in [0, R)), R >= 1 (the branches require it): E / R for
    the first E that R divides exactly, of d's bound and then, in their order, the relations assumed a d < a E with a
    a monomial in the sizes of coefficient >= 1 (so a >= 1: d < E) and E free of d, since R dq <= d < R (E / R); d's
    bound itself (dq <= d) where none is."""
    tops = [bound]
    for rel in assumed:
        a = rel.lhs.divided(Poly.symbol(d)) if rel.op == "<" and d not in rel.rhs.symbols() else None
        if a is not None and len(a.terms) == 1 and next(iter(a.terms.values())) >= 1 and a.symbols() <= set(sizes):
            E = rel.rhs.divided(a)
            if E is not None:
                tops.append(E)
    for E in tops:
        top = E.divided(R)
        if top is not None and top.terms:
            return top
    return bound


def complete_tree(paths: list[tuple], branches: Callable[[list[Hashable]], str | None], what: str) -> list[str]:
    """Problems with paths as a tree: repeated, one a prefix of another, or a node whose children are not
    what ``branches`` accepts (it returns a problem, or None)."""
    if len(set(paths)) != len(paths):
        return [f"two {what}s have the same path"]
    out: list[str] = []

    def visit(prefix: tuple, group: list[tuple]) -> None:
        if prefix in group:
            if len(group) > 1:
                out.append(f"the {what} at {list(prefix)} is also split further")
            return
        children: dict[Hashable, list[tuple]] = {}
        for p in group:
            children.setdefault(p[len(prefix)], []).append(p)
        problem = branches(list(children))
        if problem is not None:
            out.append(f"{what}s at {list(prefix)}: {problem}")
            return
        for step, sub in children.items():
            visit(prefix + (step,), sub)

    visit((), paths)
    return out


def case_branches(steps: list[Hashable]) -> str | None:
    """A case split: exactly {fix s = c, s differs from c}."""
    if len(steps) == 2 and {s[0] for s in steps} == {"fix", "differs"} and len({s[1:] for s in steps}) == 1:  # type: ignore[index]
        return None
    return f"the splits {steps} are not s = c and s != c"


def region_branches(sizes: tuple[str, ...]) -> Callable[[list[Hashable]], str | None]:
    def check(steps: list[Hashable]) -> str | None:
        kinds = {s[0] for s in steps}  # type: ignore[index]
        if kinds == {"assume"} and len(steps) == 2:
            rel = parse_rel(steps[0][1])  # type: ignore[index]
            if steps[1][1] == rel.negated().text:  # type: ignore[index]
                return None
            return f"{steps[0][1]} and {steps[1][1]} are not a relation and its negation"  # type: ignore[index]
        if kinds == {"refine"} and len({s[1:3] for s in steps}) == 1:  # type: ignore[index]
            R = parse_size(steps[0][2])  # type: ignore[index]
            residues = sorted(s[3] for s in steps if s[3] is not None)  # type: ignore[index]
            if len(steps) == 1 and steps[0][3] is None and nonnegative_polynomial(R, sizes):  # type: ignore[index]
                return None
            k = R.constant()
            if k is not None and k >= 1 and residues == list(range(k)) and len(steps) == k:
                return None
            return f"the refinement of {steps[0][1]} by {steps[0][2]} has the residues {[s[3] for s in steps]}"  # type: ignore[index]
        return f"the branches {steps} are neither a relation and its negation nor a refinement"

    return check

