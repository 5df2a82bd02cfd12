"""The one conclusion every claim check ends with: the recorded relation and ``holds`` against the check."""

from __future__ import annotations

from typing import Any, Sequence

from attncert.proofs.checkers.reading import obj


class Findings(list[str]):
    """A check's problems (a list of str, as every check returns), with ``undecided``: why the method did not
    establish the claim where nothing shows that it does not hold. Read by verify, for a genuine certificate
    recording ``holds: false``: NOT-PROVEN when it has ``undecided`` and no failure, else DOES-NOT-HOLD."""

    undecided: list[str]


def conclude(
    doc: dict[str, Any], relation: str, problems: list[str], failures: Sequence[str] = (), undecided: Sequence[str] = ()
) -> Findings:
    """The problems of the document: the recorded result must say the claim's relation, and holds exactly
    when the check found neither a problem, nor a failure, nor anything undecided.

    ``problems`` are recorded values that are not what the check recomputes (the document does not check);
    ``failures`` are decided reasons why the claim itself does not hold (a confirmed counterexample, a
    stated bound violated on a grid pair, weights mapping an input elsewhere); ``undecided`` are why the
    method did not establish it without deciding that it fails (a bound not reached at the working
    precision, a grid pair the enclosures cannot decide, a compositional proof that does not go through):
    the claim is then not proven, and it may hold. A document that records ``holds: false`` with a failure
    or an undecided reason the check confirms has no problem: it is a genuine certificate of a claim that
    does not hold (verify's DOES-NOT-HOLD) or is not proven (NOT-PROVEN). One that records ``holds: true``
    has each of them as a problem."""
    result = obj(doc, "result")
    if result.get("relation") != relation:
        problems.append(f"the relation of this claim is {relation!r}, the certificate says {result.get('relation')!r:.30}")
    holds = not problems and not failures and not undecided
    if result.get("holds") is True and (failures or undecided):
        problems.extend([*failures, *undecided])
    elif result.get("holds") is not holds:
        problems.append(f"the recorded result says holds={result.get('holds')!r:.10}, the check says {holds}")
    found = Findings(problems)
    found.undecided = [] if failures else list(undecided)
    return found
