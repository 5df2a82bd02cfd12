r"""The record the checker retraces: the facts and each region's steps, and the rule that ties them.

A step says: at this node, position and context, of this kind, this was decided, by these facts.
The checker takes a decision only where a recorded step of the region states it (same node,
position, context text, kind and decision text), and only if each cited fact has, as its goal, the
relation the decision needs, and hypotheses that are all among the hypotheses of the checker's own
context (:class:`~.context.Context`): the fact, proven, then makes the decision true throughout the
context. Which recorded step is taken is the checker's choice (``proposals``: the digits of a
division, a binder's name, a pin); what it proposes is checked by the checker's own algebra.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from attncert.exact import ParseError
from attncert.proofs.checkers.every_size.context import Context
from attncert.proofs.checkers.every_size.sizes import Poly, Rel, parse_rel
from attncert.proofs.checkers.reading import whole

#: The most facts, regions and steps per region a certificate may record.
MAX_FACTS, MAX_REGIONS, MAX_STEPS = 20_000, 512, 20_000


class Refusal(Exception):
    """What the checker cannot establish in a region (a missing or unfit step, a form that differs)."""


@dataclass(frozen=True)
class Fact:
    """A recorded fact: its hypotheses, goal, whether the extremes of max / min are stated, its script."""

    hypotheses: tuple[Rel, ...]
    goal: Rel
    extremes: bool
    smtlib: str


def read_fact(obj: Any, k: int) -> Fact:
    if not isinstance(obj, dict) or set(obj) != {"hypotheses", "goal", "extremes", "smtlib"}:
        raise ParseError(f"fact {k} must have hypotheses, goal, extremes and smtlib")
    hyps = obj["hypotheses"]
    if not isinstance(hyps, list) or not isinstance(obj["extremes"], bool) or not isinstance(obj["smtlib"], str):
        raise ParseError(f"fact {k}: hypotheses is a list, extremes true or false, smtlib a string")
    return Fact(tuple(parse_rel(h) for h in hyps), parse_rel(obj["goal"]), obj["extremes"], obj["smtlib"])


@dataclass
class Step:
    """A recorded step: its node, position, context and kind (``where``), decision and facts; steps with the
    same content are one (a decision taken twice is recorded twice)."""

    where: tuple[int, str, str, str]
    decision: str
    facts: tuple[int, ...]

    @property
    def key(self) -> tuple:
        return (self.where, self.decision, self.facts)


@dataclass
class Steps:
    """One region's steps, by (node, position, context, kind); the facts, how one is proven (asked when first
    cited), and those cited."""

    facts: list[Fact]
    proven: Callable[[int], bool]
    table: dict[tuple[int, str, str, str], list[Step]] = field(default_factory=dict)
    taken: set[tuple] = field(default_factory=set)
    cited: set[int] = field(default_factory=set)
    binders: set[str] = field(default_factory=set)
    #: the range cuts taken (by identity: each recorded cut cuts one sum)
    cuts: set[int] = field(default_factory=set)

    def choices(self, node: int, pos: Poly, ctx: Context, kind: str) -> list[Step]:
        """The recorded steps at this node, position, context and kind (the checker picks among them)."""
        return self.table.get((node, pos.text(), ctx.text, kind), [])

    def decide(self, node: int, pos: Poly, ctx: Context, kind: str, rel: Rel) -> bool:
        """Whether rel holds throughout the context, by a recorded step deciding rel or its negation."""
        neg = rel.negated()
        for step in self.choices(node, pos, ctx, kind):
            for answer, r in ((True, rel), (False, neg)):
                if step.decision == r.text:
                    self.take(step, [r], ctx)
                    return answer
        raise Refusal(f"node {node} at {pos.text()}: no recorded {kind} step decides {rel.text}")

    def require(self, node: int, pos: Poly, ctx: Context, kind: str, rels: list[Rel]) -> None:
        """That the relations hold throughout the context, by a recorded step stating them all."""
        text = " and ".join(r.text for r in rels)
        for step in self.choices(node, pos, ctx, kind):
            if step.decision == text:
                self.take(step, rels, ctx)
                return
        raise Refusal(f"node {node} at {pos.text()}: no recorded {kind} step states {text[:200]}")

    def take(self, step: Step, rels: list[Rel], ctx: Context) -> None:
        """The step's facts prove the relations in the context: one fact per relation, its goal that
        relation, its hypotheses among the context's, and proven."""
        if len(step.facts) != len(rels):
            raise Refusal(f"a step deciding {rels[0].text} cites {len(step.facts)} facts for {len(rels)} relations")
        for k, r in zip(step.facts, rels):
            f = self.facts[k]
            if f.goal.text != r.text:
                raise Refusal(f"fact {k} proves {f.goal.text}, not {r.text}")
            extra = next((h.text for h in f.hypotheses if h.text not in ctx.texts), None)
            if extra is not None:
                raise Refusal(f"fact {k} assumes {extra}, which is not a hypothesis of the context {ctx.text[:200]}")
            if not self.proven(k):
                raise Refusal(f"fact {k} ({r.text}) is not proven")
            self.cited.add(k)
        self.taken.add(step.key)

    def mark(self, step: Step) -> None:
        """A step taken that cites no fact (a binder, a range written out)."""
        if step.facts:
            raise Refusal(f"a step that needs no fact cites {len(step.facts)}")
        self.taken.add(step.key)

    def untaken(self) -> list[str]:
        """The recorded steps not taken, each as its kind, node, position and decision."""
        return [f"{s.where[3]} at node {s.where[0]}, position {s.where[1]}: {s.decision[:120]}" for ss in self.table.values() for s in ss if s.key not in self.taken]


def read_steps(raw: Any, facts: list[Fact], proven: Callable[[int], bool], where: str) -> Steps:
    if not isinstance(raw, list) or len(raw) > MAX_STEPS:
        raise ParseError(f"{where}: steps must be a list of at most {MAX_STEPS}")
    out = Steps(facts, proven)
    for s in raw:
        if not isinstance(s, dict) or set(s) != {"node", "position", "context", "kind", "decision", "facts"}:
            raise ParseError(f"{where}: a step has node, position, context, kind, decision and facts")
        node, ks = s["node"], s["facts"]
        if not whole(node) or not all(isinstance(s[x], str) for x in ("position", "context", "kind", "decision")):
            raise ParseError(f"{where}: a step's node is an integer, its position, context, kind and decision strings")
        if not isinstance(ks, list) or not all(whole(k) and 0 <= k < len(facts) for k in ks):
            raise ParseError(f"{where}: a step cites facts by their index (0 .. {len(facts) - 1})")
        place = (node, s["position"], s["context"], s["kind"])
        out.table.setdefault(place, []).append(Step(place, s["decision"], tuple(ks)))
    return out
