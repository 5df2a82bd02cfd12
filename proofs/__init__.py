"""attncert.proofs: one runnable proof script per claim, the verifier and the command line."""
