"""Exact optimal transport (the earth mover's distance) with optimality certificates (docs/transport.md).

:func:`optimal_transport` solves min <P, M> over the plans of (a, b) exactly, from POT's float basis when POT
is installed; :func:`judge_plan` says exactly whether a given plan is optimal, and its cost gap. The POT-order
functions ``emd``, ``emd2`` and ``certify_plan`` are in :mod:`constructions.transport.pot`.
"""

from attncert.constructions.transport.problem import TransportInputError, TransportProblem, read_transport
from attncert.constructions.transport.solve import OptimalTransport, PlanVerdict, judge_plan, optimal_transport

__all__ = ["OptimalTransport", "PlanVerdict", "TransportInputError", "TransportProblem", "judge_plan", "optimal_transport", "read_transport"]
