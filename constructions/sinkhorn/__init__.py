"""Sinkhorn: certified entropic transport and the Sinkhorn Transformer (docs/design.md, "Sinkhorn").

Modules, one idea each: :mod:`problem` (input; rational costs or cost
enclosures), :mod:`kernel` (exp(-C/eps)), :mod:`hilbert` (projective metric and
the a-posteriori bound), :mod:`logdomain` (float iterations), :mod:`krawczyk`
(interval Newton on the dual), :mod:`shifted` (the shifted kernel in float64 with a
proven error), :mod:`verified` (float-verified: POT's iterations, the bound with
proven rounding errors), :mod:`precise` (high-precision: exact BLAS products of a
fixed-point kernel), :mod:`operator` (the operator in EE, Ball and Float), :mod:`fixed_point` (positive plans are Sinkhorn plans, exactly),
:mod:`wasserstein` (exact W1); the Sinkhorn Transformer: :mod:`texts` (texts
and families), :mod:`encoder` (in-context encoders), :mod:`rowforms` (EE rows
over one denominator), :mod:`inner_cost` (the cost -<Q, K>), :mod:`graph` (the
model as one graph), :mod:`transformer` (the model), :mod:`systems` (coupling
systems) and :mod:`universality` (one network per width for a family).
"""

from attncert.constructions.sinkhorn.operator import SinkhornResult, sinkhorn
from attncert.constructions.sinkhorn.problem import Problem, SinkhornInputError, read_problem

__all__ = ["sinkhorn", "SinkhornResult", "Problem", "SinkhornInputError", "read_problem"]
