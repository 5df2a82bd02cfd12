"""Row softmax in any domain: softmax(s)_j = e^{s_j} / sum_k e^{s_k}.

In EE with rational scores every entry is exact. All entries of a row share
one denominator object D = sum_k e^{s_k}, so later sums of the row (as in an
attention output  sum_j softmax_j v_j) stay over D instead of growing to D^n
(see :mod:`exact.eenumber`). No max-subtraction is done: it is unnecessary in
exact domains, and in Float it would change the computation being compared.
"""

from __future__ import annotations

from typing import Any, Sequence

from attncert.exact.domains.base import Domain


def softmax_row(scores: Sequence[Any], domain: Domain) -> list[Any]:
    """softmax(s)_j = e^{s_j} / sum_k e^{s_k} in ``domain``. A score is a number, so a string is read as
    the number it spells (``"1/3"``, ``"0.1"`` exactly; docs/rasp.md, "Numbers and strings")."""
    exps = [domain.exp(domain.convert(s)) for s in scores]
    total = domain.sum(exps)
    return [domain.div(e, total) for e in exps]


def softmax_rows(rows: Sequence[Sequence[Any]], domain: Domain) -> list[list[Any]]:
    return [softmax_row(r, domain) for r in rows]
