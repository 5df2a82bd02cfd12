"""Stage 2: the labelled residual basis.

Dimension 0 is ``one`` (1 at every position), dimension 1 is ``bos`` (1 at the
beginning-of-sequence position only). Then come the positional columns (static
SOps, the squares of selection keys and queries, and derived position features),
then the token columns, then one or two columns for every dynamic SOp, in
topological order. Every SOp has its own columns, written once: the residual
stream is additive and nothing is overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attncert.exact.errors import LimitExceeded


@dataclass
class Basis:
    labels: list[str] = field(default_factory=lambda: ["one", "bos"])
    index: dict[str, int] = field(default_factory=lambda: {"one": 0, "bos": 1})

    #: Refuse to grow past this many dimensions (each costs a column over every position).
    limit: int | None = None

    def add(self, label: str) -> int:
        """The dimension of ``label``, added at the end if new (LimitExceeded past ``limit``)."""
        if label not in self.index and self.limit is not None and len(self.labels) >= self.limit:
            raise LimitExceeded(f"the residual basis would exceed {self.limit} dimensions (adding {label!r:.40}); raise --max-pairs")
        if label not in self.index:
            self.index[label] = len(self.labels)
            self.labels.append(label)
        return self.index[label]

    def __getitem__(self, label: str) -> int:
        return self.index[label]

    def __len__(self) -> int:
        return len(self.labels)


def columns(label: str, width: int) -> list[str]:
    """The basis labels of a SOp: its label, or label.0, label.1 for a pair."""
    return [label] if width == 1 else [f"{label}.{i}" for i in range(width)]
