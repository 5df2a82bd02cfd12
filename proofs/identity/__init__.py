"""Claims for ALL real inputs (``CLAIM_identity``): the constructions evaluated over the symbolic field
(:mod:`exact.symbolic`), their region splits, and the certificates the identity checkers re-check."""
