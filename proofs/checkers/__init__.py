"""Independent checkers: one module per theorem that ``attncert verify`` relies on.

Each theorem function states its hypotheses in its docstring and checks them from
the recorded data *before* it concludes anything; a hypothesis that fails raises
:class:`~proofs.checkers.sinkhorn.problem.HypothesisError`, which a claim check reports as
a problem (REJECTED). The claim checks (:mod:`proofs.checkers.sinkhorn.claims`) combine them.

Nothing in this package imports :mod:`constructions`: a prover and its checker
share no code beyond :mod:`exact`, :mod:`proofs.core.params` and this package, and a
test imports every checker in a fresh interpreter to measure that.
"""
