r"""Predicted peak memory of a RASP claim, from its sequence length and its schedule.

    M = M_0 + N (b w + r)

* M_0: the interpreter with attncert's libraries loaded (about 62 MiB measured);
* N: the sequence length;
* w: the most values (sequences and selections of N entries) the evaluation holds at
  once, read from the graph's schedule (:func:`constructions.rasp.evaluate.held_values`):
  the static ones cached for the length, and the data-dependent ones between the step
  that computes each and its last use. U holds 32 to 35, a matrix product 10;
* b: bytes per held value and position. Index sequences are int64 arrays, selections
  int64 pairs, and the numbers of a data sequence are mostly shared objects (a gather
  copies pointers), so b is small; measured: U(256, 8, 8) holds 32 values and peaks at
  910 bytes a position while evaluating, a 48 x 48 x 48 product 10 values and 300 bytes;
* r: bytes per position of the certificate when it records every position (the output
  block and the rest, as JSON and as bytes): about 1.25 KiB in EE (an EE entry, and U's
  outputs have 2n terms each), 64 bytes for rationals, 0 for claims that record no
  sequence.

Measured peaks (RSS of ``attncert prove universal``) against the prediction: U(64, 8, 8)
138 MiB (predicted 136), U(256, 8, 8) 1.14 GiB (predicted 1.19). The figure is an estimate;
it refuses a run only when it exceeds the memory this machine has (``--max-memory``).
"""

from __future__ import annotations

import networkx as nx

from attncert.constructions.rasp.evaluate import held_values

#: The interpreter with attncert loaded, rounded up.
BASE_BYTES = 64 << 20
#: Bytes per held value and position (U(256, 8, 8): 910 bytes a position for 32 values, rounded up).
BYTES_PER_HELD = 32
#: What U's schedule holds: the default for a claim that does not read its own.
HELD = 32
#: Certificate bytes per recorded position, by the domain of the recorded numbers.
RECORDED = {"EE": 1280, "QQ": 64}


def predict(positions: int, held: int = HELD, recorded: int = 0) -> int:
    """M_0 + N (b w + r), in bytes."""
    return BASE_BYTES + positions * (BYTES_PER_HELD * held + recorded)


def of_graph(g: nx.MultiDiGraph, positions: int, domain: str | None = None) -> int:
    """The prediction for one evaluation of g on N positions, recording every position in ``domain`` (None: none).

    A domain without a figure (one the claim will refuse, say) is counted as EE, the larger one.
    """
    return predict(positions, held_values(g), RECORDED.get(domain, RECORDED["EE"]) if domain else 0)
