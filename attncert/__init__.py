"""attncert: an exact-arithmetic proof checker for what transformers can express.

The repository's folders ``exact/``, ``constructions/`` and ``proofs/`` are installed as the
subpackages ``attncert.exact`` (the exact fields and balls), ``attncert.constructions`` (RASP
programs and their graphs) and ``attncert.proofs`` (claims, certificates, the command line);
dependencies point one way, proofs -> constructions -> exact.
"""
