r"""POT's argument order for exact optimal transport: ``emd(a, b, M)``, ``emd2(a, b, M)``, ``certify_plan(a, b, M, G)``.

Code written against POT's ``ot.emd`` switches in one line::

    G = ot.emd(a, b, M)                    # POT: a float64 network simplex
    G, cert = attncert.emd(a, b, M)        # the optimal plan (float64, each entry the double nearest the exact one)
                                           # and its certificate: exact plan, exact cost, exact dual potentials
    W = attncert.emd2(a, b, M)             # the exact optimal cost, a fractions.Fraction (float(W) for POT's value)
    v = attncert.certify_plan(a, b, M, G)  # is POT's own plan optimal? exactly, with its cost gap

Numbers are read exactly (a float is its binary value; :mod:`constructions.transport.problem`), the total
masses follow the one rule for float marginals (b scaled to sum(a) within a relative 1e-12), and the answer
is proven by an optimality certificate (:mod:`constructions.transport.solve`): exact potentials whose reduced
costs are >= 0 and an exact plan on their zero set. POT's options that tune its solver (``numItermax``,
``numThreads``, ``center_dual``, ``check_marginals``) are accepted and change nothing certified; ``log=True`` is
refused (the certificate holds the exact cost and potentials). Bad input raises
:class:`~constructions.transport.problem.TransportInputError` (a ParseError, one line).
"""

from __future__ import annotations

import importlib.util
from fractions import Fraction
from typing import Any

import numpy as np
from flint import fmpq

from attncert.constructions.transport.problem import TransportInputError, TransportProblem, read_transport
from attncert.constructions.transport.solve import OptimalTransport, PlanVerdict, judge_plan, optimal_transport
from attncert.exact.errors import ParseError
from attncert.exact.rationals import parse_rational

#: POT's options of ``ot.emd`` that tune its float solver; they have no meaning for a certified answer.
POT_TUNING = frozenset({"numItermax", "numThreads", "center_dual", "check_marginals"})


def _options(log: bool, options: dict[str, Any], name: str) -> None:
    unknown = sorted(set(options) - POT_TUNING)
    if unknown:
        raise TypeError(f"{name}() got an unexpected keyword argument {unknown[0]!r}")
    if log:
        raise TransportInputError("log=True is POT's float log; the certificate (cert.cost, cert.f, cert.g) holds it exactly")


def emd(a: Any, b: Any, M: Any, *, log: bool = False, **pot_options: Any) -> tuple[np.ndarray, OptimalTransport]:
    """(G, cert): the optimal plan as float64 and its certificate (``cert.arcs`` the exact plan's basis arcs
    (i, j, x_ij), ``cert.cost`` the exact optimal cost, ``cert.f``, ``cert.g`` the exact potentials,
    ``cert.exact_plan()`` the plan as Fractions)."""
    _options(log, pot_options, "emd")
    cert = optimal_transport(read_transport(a, b, M))
    return cert.plan(), cert


def emd2(a: Any, b: Any, M: Any, *, log: bool = False, **pot_options: Any) -> Fraction:
    """The exact optimal transport cost min <P, M>, as a Fraction (proven by the certificate of :func:`emd`)."""
    _options(log, pot_options, "emd2")
    W = optimal_transport(read_transport(a, b, M)).cost
    return Fraction(int(W.p), int(W.q))


def certify_plan(a: Any, b: Any, M: Any, G: Any, log: dict[str, Any] | None = None) -> PlanVerdict:
    """The exact verdict on the plan G (POT's ``ot.emd`` plan, say): ``v.feasible``, ``v.optimal``, ``v.cost``
    (<G, M>), ``v.gap`` (<G, M> minus the optimum), ``v.complementary`` and ``v.optimum`` (the certified optimum).

    ``log``: POT's log of the run that gave G (``ot.emd(..., log=True)``), whose duals u, v complete G's support to
    a basis; without it the optimum starts from POT's own run (when POT is installed), else from G's support with
    duals of its own (Bellman-Ford: :func:`~constructions.transport.start.plan_duals`). Correct either way.
    """
    problem = read_transport(a, b, M)
    rows, cols, values = read_plan(G, problem)
    u, v = (log.get("u"), log.get("v")) if isinstance(log, dict) else (None, None)
    if u is None and importlib.util.find_spec("ot") is not None:
        optimum = optimal_transport(problem)  # from POT's own basis and duals: faster than duals of G's support
    else:
        if not (isinstance(G, np.ndarray) and G.dtype == np.float64):  # the start needs G's positive entries as doubles
            G = np.zeros((problem.n, problem.m))
            G[rows, cols] = [max(float(x), 0.0) for x in values]
        optimum = optimal_transport(problem, G=G, u=u, v=v)
    return judge_plan(problem, rows, cols, values, optimum)


def read_plan(G: Any, problem: TransportProblem) -> tuple[np.ndarray, np.ndarray, list[fmpq]]:
    """The nonzero entries (rows, cols, exact values) of an n x m plan given as an array or a list of rows."""
    n, m = problem.n, problem.m
    if isinstance(G, np.ndarray) and G.dtype.kind in "iuf":
        if G.shape != (n, m):
            raise TransportInputError(f"shapes disagree: M is {n}x{m}, the plan G is {'x'.join(map(str, G.shape))}")
        if G.dtype.kind == "f" and not np.isfinite(G).all():
            raise TransportInputError("the plan G has NaN or infinite entries")
        rows, cols = np.nonzero(G)
        picked = G[rows, cols].tolist()
        return rows, cols, [fmpq(*x.as_integer_ratio()) if isinstance(x, float) else fmpq(int(x)) for x in picked]
    G = G.tolist() if hasattr(G, "tolist") else G
    if not isinstance(G, (list, tuple)) or len(G) != n or not all(isinstance(r, (list, tuple)) and len(r) == m for r in G):
        raise TransportInputError(f"the plan G must be an {n}x{m} matrix, as M is")
    try:
        exact = [[parse_rational(x, dyadic_floats=True) for x in r] for r in G]
    except ParseError as e:
        raise TransportInputError(f"the plan G: {e}") from None
    nz = [(i, j, x) for i, r in enumerate(exact) for j, x in enumerate(r) if x != 0]
    return (
        np.array([i for i, _, _ in nz], dtype=np.intp),
        np.array([j for _, j, _ in nz], dtype=np.intp),
        [x for _, _, x in nz],
    )
