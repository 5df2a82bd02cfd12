"""Independent checks of the exact transport claims (LP duality in QQ): :mod:`proofs.checkers.transport.plan`."""
