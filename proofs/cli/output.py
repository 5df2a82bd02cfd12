"""What the verbs print and write: the summary table, an output's target and its bytes, the version line."""

from __future__ import annotations

import sys
from pathlib import Path


def summary_row(doc: dict, elapsed: float) -> list[str]:
    size = doc["construction"].get("size", {})
    heads = size.get("heads")
    sizes = ",".join(f"{k}={v}" for k, v in sorted(doc["params"].items()) if k != "seed")
    return [
        doc["claim"],
        sizes,
        str(size.get("layers", "-")),
        str(max(heads) if heads else "-"),
        doc["result"]["relation"],
        "yes" if doc["result"]["holds"] else "NO",
        f"{elapsed:.2f}s",
    ]


def target(out: str | None, default: Path) -> Path | None:
    """Where an output goes: None for ``-`` (standard output), else a path checked before any work.

    A path given must be in an existing folder; only the default's folder (``certificates/``,
    ``models/``, ``plots/`` in the working directory) is made, when the output is written."""
    from attncert.exact.certificate import check_target

    if out == "-":
        return None
    path = Path(out) if out else default
    check_target(path, create_folder=not out)
    return path


def emit(target: Path | None, data: bytes, create_folder: bool) -> str:
    """Write data to the target (atomically; ``create_folder``: a default output folder) or to standard output;
    say where it went."""
    from attncert.exact.certificate import atomic_write_bytes

    if target is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return "standard output"
    atomic_write_bytes(target, data, create_folder)
    return str(target)


def print_row(row: list[str], widths: list[int]) -> None:
    from attncert.proofs.core.figures import abbreviate

    cells = [abbreviate(c, w) for c, w in zip(row, widths)]  # a long parameter list loses whole parameters
    print("  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip(), flush=True)


def print_table(header: list[str], rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    for r in [header, ["-" * w for w in widths]] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


HEADER = ["claim", "sizes", "layers", "max heads", "relation", "holds", "time"]


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("attncert")
    except PackageNotFoundError:
        return "0+unknown"
