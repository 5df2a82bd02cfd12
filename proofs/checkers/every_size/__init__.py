"""The independent check of every-size certificates (docs/every-size.md, "What verify does").

Its own size expressions (:mod:`.sizes`), contexts (:mod:`.context`), SMT-LIB writer and cvc5
(:mod:`.smtlib`), Σ normal form on sympy (:mod:`.forms`), template reader (:mod:`.graph`), evaluator
(:mod:`.evaluate`) guided by the record (:mod:`.record`), coverage of cases and regions
(:mod:`.coverage`) and references (:mod:`.references`); :func:`check_every_size` (:mod:`.check`)
combines them. Nothing here imports the constructions or the every-size prover.
"""

from attncert.proofs.checkers.every_size.check import check_every_size

__all__ = ["check_every_size"]
