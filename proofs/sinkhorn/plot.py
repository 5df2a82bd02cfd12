"""``attncert plot sinkhorn_universality``: a log-log PNG of the certified family maximum of W1 against width.

One colour per coupling system: the maximum over the fit pairs of the certified
upper bounds on W1(F(mu, nu), T_w(mu, nu)) (solid, markers) and the maximum over
the held-out pairs (dashed), against the width w. A system whose maxima are all
below SLACK (the independent one: cost 0 reaches it at every width, and its
bounds are the enclosures' slack, about 1e-18) is named in the legend instead
of being drawn, so that it does not flatten the other curves. matplotlib is
imported only here, with the Agg backend; floats are for drawing only.
"""

from __future__ import annotations

import io
from typing import Any

from attncert.exact import QQ

#: Maxima below this are enclosure slack, not approximation error.
SLACK = 1e-12


def universality_png(doc: dict[str, Any]) -> bytes:
    """The PNG bytes of the plot of a sinkhorn_universality certificate."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    widths = doc["construction"]["size"]["widths"]
    fig, ax = plt.subplots(figsize=(8, 5), dpi=120)
    drawn = False
    for k, (system, s) in enumerate(doc["outputs"]["summary"].items()):
        colour = f"C{k % 10}"
        fit = [float(QQ.from_json(v)) for v in s["fit_max"]]
        if max(fit) < SLACK:
            ax.plot([], [], " ", label=f"{system}: reached at every width (certified max <= {max(fit):.1e}, the enclosures' slack)")
            continue
        # A maximum of 0 has no place on a log axis: that point is left out (a gap in the line).
        ax.plot(widths, [v if v > 0 else float("nan") for v in fit], "o-", color=colour, label=f"{system}: fit pairs, certified max")
        drawn = True
        if all(v is not None for v in s["held_out_max"]):
            held = [float(QQ.from_json(v)) for v in s["held_out_max"]]
            ax.plot(widths, [v if v > 0 else float("nan") for v in held], "s--", color=colour, alpha=0.7, label=f"{system}: held-out pairs, certified max")
    p = doc["params"]
    ax.set_xscale("log", base=2)
    if drawn:
        ax.set_yscale("log")
    ax.set_xlabel("width w (features of Q and K)")
    ax.set_ylabel("max over the family of W1(F(mu, nu), T_w(mu, nu))")
    ax.set_title(f"Sinkhorn Transformers fitted once: {p['pairs']} fit pairs, {p['held_out']} held out, eps = {p['eps']}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()
