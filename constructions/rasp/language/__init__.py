"""The RASP language itself (Weiss et al. 2021), parsed with Lark and run exactly (issue 12, in progress).

:mod:`.parser` turns source into a syntax tree with the reference's precedence;
:mod:`.interpreter` runs it, computing plain values and building the same RASP
graphs as the Python API for sequence operations.
"""
