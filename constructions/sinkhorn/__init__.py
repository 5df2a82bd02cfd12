"""Sinkhorn: certified entropic transport and the Sinkhorn Transformer (docs/design.md, "Sinkhorn").

Modules, one idea each: :mod:`problem` (input), :mod:`kernel` (exp(-C/eps)),
:mod:`hilbert` (projective metric and the a-posteriori bound), :mod:`logdomain`
(float iterations), :mod:`krawczyk` (interval Newton on the dual),
:mod:`operator` (the operator in EE, Ball and Float), :mod:`fixed_point`
(positive plans are Sinkhorn plans, exactly), :mod:`wasserstein` (exact W1),
:mod:`transformer` (the Sinkhorn Transformer) and :mod:`universality`
(approximating coupling systems).
"""

from constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from constructions.sinkhorn.problem import Problem, SinkhornInputError, read_problem

__all__ = ["sinkhorn", "SinkhornResult", "Problem", "SinkhornInputError", "read_problem"]
