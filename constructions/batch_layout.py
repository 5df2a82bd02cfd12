"""A batch of matrix inputs as the tokens of one batched evaluation (constructions/rasp/batch.py).

``encode_batch(layout, mats, domain)`` holds, for every m in ``mats``, the token
sequence ``layout.encode(m, domain)`` (the same values of the same types). Inputs
that are the same object in every m, such as the A and V of one attention layer
run on many words, and the padding after them are encoded once and shared by the
batch; only the inputs that vary are read entry by entry.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from attncert.constructions.layout import Layout
from attncert.constructions.rasp.batch_values import Numbers, Tokens
from attncert.exact import Domain
from attncert.exact.matrices import Rows, shape


def encode_batch(layout: Layout, mats: Sequence[Mapping[str, Rows]], domain: Domain) -> Tokens:
    first = layout.encode(mats[0], domain)  # checks the shapes, and gives what is shared
    parts, at, shared_from = [], 0, None
    for name, r, c in layout.inputs:
        if all(m[name] is mats[0][name] for m in mats):
            shared_from = at if shared_from is None else shared_from
        else:
            if shared_from is not None:
                parts.append(Numbers.of_values([first[shared_from:at]]))
                shared_from = None
            for m in mats:
                if shape(m[name]) != (r, c):
                    layout.encode(m, domain)  # raises encode's own error for this input
            parts.append(Numbers.of_values([[domain.native(x) for row in m[name] for x in row] for m in mats]))
        at += r * c
    parts.append(Numbers.of_values([first[at if shared_from is None else shared_from :]]))
    if any(p is None for p in parts):
        raise ValueError("encode_batch takes exact numbers (fmpq, or EENumbers over 1) only")
    value = Numbers.concat(parts) if len(parts) > 1 else parts[0]
    tags = Numbers.of_ints(np.ones((1, layout.length), dtype=np.int64), ints=False)
    return Tokens(layout.length, len(mats), value=value, tag=tags, plain=True)
