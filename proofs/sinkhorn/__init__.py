"""Sinkhorn claims (issue 7): importing this package registers all five.

sinkhorn_fixed_point, sinkhorn_limit, sinkhorn_convergence,
sinkhorn_transformer and sinkhorn_universality; one module each.
"""

from attncert.proofs.sinkhorn import convergence, fixed_point, limit, transformer, universality  # noqa: F401
