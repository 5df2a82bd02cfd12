"""``attncert plot lipschitz_rates``: a log-log PNG of certified error against width, with the theory lines.

One series per (target, d): the certified upper bounds eps (solid, markers)
and the certified lower bounds (dotted) against the network's width N. The
theory line is eps ∝ h^alpha = N^(-alpha/d) up to the padding of N to a power
of two (dashed, through the series' first point). matplotlib is imported only
here, with the Agg backend (no display needed); floats are for drawing only.
"""

from __future__ import annotations

import io
from typing import Any

from attncert.exact import QQ


def rates_png(doc: dict[str, Any]) -> bytes:
    """The PNG bytes of the plot of a lipschitz_rates certificate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for row in doc["outputs"]["rows"]:
        series.setdefault((row["target"]["name"], row["grid"]["d"]), []).append(row)
    fig, ax = plt.subplots(figsize=(10, 5.5), dpi=120)
    for k, ((name, d), rows) in enumerate(series.items()):
        colour = f"C{k % 10}"
        widths = [row["width"] for row in rows]
        upper = [float(QQ.from_json(row["certified"]["eps"])) for row in rows]
        lower = [float(QQ.from_json(row["certified"]["lower"])) for row in rows]
        alpha = float(QQ.from_json(rows[0]["target"]["alpha"]))
        ax.plot(widths, upper, "o-", color=colour, label=f"{name}, d = {d}: certified eps")
        ax.plot(widths, lower, ":", color=colour, alpha=0.8)
        theory = [upper[0] * (w / widths[0]) ** (-alpha / d) for w in widths]
        ax.plot(widths, theory, "--", color=colour, alpha=0.5, label=f"theory ∝ N^(-{QQ.to_json(QQ.from_json(rows[0]['target']['alpha']) / d)})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("width N of the RASP program (sequence length)")
    ax.set_ylabel("sup |f - g| on [0, 1]^d")
    ax.set_title("McShane MaxMin networks: certified error (solid), sampled lower bound (dotted)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()

