"""``attncert plot`` of the Sinkhorn claims: couplings as heatmaps, certified bounds against eps and width.

* ``sinkhorn_transformer``: the coupling P* of the two texts as a heatmap (rows mu's
  points, columns nu's, each cell the midpoint of P*_ij's certified ball), the
  certified bound max_ij |log P^_ij - log P*_ij| in the title.
* ``sinkhorn_convergence``: the certified bound against eps (both exact rationals,
  drawn as powers of ten, :mod:`proofs.core.axes`) and the tolerance; under it, in a
  band of its own on the same eps axis, where POT's float64 Sinkhorn failed or
  converged (the certificate's side notes: information, not the claim); below, the
  certified plan at each eps as a heatmap, the panels on one colour scale with its
  colorbar.
* ``sinkhorn_universality``: one colour per coupling system: the maximum over the
  fit pairs of the certified upper bounds on W1(F(mu, nu), T_w(mu, nu)) (solid,
  markers) and the maximum over the held-out pairs (dashed), against the width w.
  A system whose maxima are all below SLACK (the independent one: cost 0 reaches
  it at every width, and its bounds are the enclosures' slack, about 1e-18) is
  named in the legend instead of being drawn, so that it does not flatten the
  other curves.

matplotlib is imported only while drawing, with the Agg backend; floats are for
drawing only. Each PNG states its certified bounds, rounded up, in its Title text.
"""

from __future__ import annotations

from typing import Any

from attncert.exact import QQ
from attncert.proofs.core.figures import upper
from attncert.proofs.core.axes import log10, png_bytes, powers_of_ten, shown

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
    fig.tight_layout()
    return png_bytes(fig, "certified family maxima of W1 against width: " + "; ".join(f"{system} {[upper(v) for v in s['fit_max']]}" for system, s in doc["outputs"]["summary"].items()))


#: The most plan panels under the convergence plot (the first and last eps, and evenly between).
MAX_PANELS = 6
#: Cells up to this many are written on a heatmap too (on the coupling; on each small plan panel).
MAX_WRITTEN, MAX_WRITTEN_PANEL = 64, 16
#: The certified bound's quantity, in matplotlib's mathtext.
LOG_ERROR = r"$\max_{ij}\,|\log \hat{P}_{ij} - \log P^*_{ij}|$"


def coupling_png(doc: dict[str, Any]) -> bytes:
    """The PNG of a sinkhorn_transformer certificate: its coupling, the certified bound in the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    inp, out = doc["inputs"], doc["outputs"]
    certified = out["coupling"] is not None and out["bound"] is not None
    fig, ax = plt.subplots(figsize=(7.5, 5.5), dpi=120, layout="constrained")
    image = _heatmap(ax, out["coupling"] if certified else out["iterate"], _points(inp["mu"]), _points(inp["nu"]))
    fig.colorbar(image, ax=ax, label="P_ij (midpoint of its certified ball)" if certified else "P_ij (last iterate)")
    ax.set_ylabel("mu: point (weight a_i)")
    ax.set_xlabel("nu: point (weight b_j)")
    head = f"Sinkhorn Transformer coupling, eps = {inp['eps']}, n = {len(inp['mu']['a'])}, m = {len(inp['nu']['a'])}"
    bound = upper(out["bound"]) if certified else ""
    ax.set_title(f"{head}\ncertified: {LOG_ERROR} $\\leq$ {bound}" if certified else f"{head}\nNOT certified: the last iterate is drawn", fontsize=10)
    return png_bytes(fig, f"{head}; " + (f"certified: max_ij |log P^_ij - log P*_ij| <= {bound}" if certified else "not certified"))


def convergence_png(doc: dict[str, Any]) -> bytes:
    """The PNG of a sinkhorn_convergence certificate: the certified bound against eps, and the plans."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = doc["outputs"]["runs"]
    panel_runs = [runs[k] for k in sorted({round(i * (len(runs) - 1) / (MAX_PANELS - 1)) for i in range(MAX_PANELS)})] if len(runs) > MAX_PANELS else runs
    fig = plt.figure(figsize=(max(8.0, 2.7 * len(panel_runs)), 8.6), dpi=120, layout="constrained")
    top, bottom = fig.subfigures(2, 1, height_ratios=[1.4, 1])
    pot = doc.get("side_notes", {}).get("pot", {})
    outcomes = pot.get("runs") or []
    # POT's outcomes (a side note, not the claim) in a band of their own under the bounds, sharing eps
    ax, band = top.subplots(2, 1, sharex=True, height_ratios=[6, 1]) if outcomes else (top.subplots(), None)
    x = [log10(r["eps"]) for r in runs]
    bounds = [log10(r["bound"]) if r["certified"] else float("nan") for r in runs]
    tol = log10(runs[0]["tol"])
    ax.plot(x, bounds, "o-", color="C0", label=f"certified bound on {LOG_ERROR}")
    for xi, r, b in zip(x, runs, bounds):
        ax.annotate(f"eps = {r['eps']}" + ("" if r["certified"] else ": not certified"), (xi, b if r["certified"] else tol), textcoords="offset points", xytext=(0, 8), ha="center", fontsize=8)
    ax.axhline(tol, color="grey", linestyle="--", label=f"tol = {shown(runs[0]['tol'])}")
    if band is not None:
        for outcome, marker, colour, what in ((False, "x", "C3", "fails"), (True, "o", "C2", "converges")):
            at = [xi for xi, o in zip(x, outcomes) if (o["outcome"] == "converged") is outcome]
            if at:
                band.plot(at, [0] * len(at), marker, color=colour, markersize=9, label=f"POT float64 {what} here (side note, not the claim)")
        band.set_yticks([])
        band.set_ylim(-1, 1)
        band.set_ylabel("POT\nfloat64", rotation=0, ha="right", va="center", fontsize=8)
        band.grid(True, axis="x", alpha=0.3)
    powers_of_ten(ax, "x", x)
    powers_of_ten(ax, "y", bounds + [tol])
    ax.invert_xaxis()  # eps falls to the right (the band shares the axis)
    (band or ax).set_xlabel("eps (falling to the right)")
    ax.set_ylabel("certified bound")
    ax.grid(True, alpha=0.3)
    top.legend(fontsize=8, loc="outside lower center", ncols=3)
    p = doc["params"]
    ax.set_title(f"Sinkhorn plans enclosed at every eps: {len(doc['inputs']['a'])} x {len(doc['inputs']['b'])} cost, {p['prec']}-bit balls")
    panels = bottom.subplots(1, len(panel_runs), squeeze=False)[0]
    # one colour scale for every panel, so that the panels compare, and its colorbar
    vmax = max((float(QQ.from_json(b["mid"])) for r in panel_runs if r["plan"] is not None for row in r["plan"] for b in row), default=1.0) or 1.0
    image = None
    for pax, r in zip(panels, panel_runs):
        if r["plan"] is None:
            pax.text(0.5, 0.5, "not certified", ha="center", va="center", transform=pax.transAxes)
            pax.set_axis_off()
        else:
            image = _heatmap(pax, r["plan"], None, None, MAX_WRITTEN_PANEL, 6, vmax)
        pax.set_title(f"plan at eps = {r['eps']}", fontsize=9)
    if image is not None:
        bottom.colorbar(image, ax=list(panels), label="P_ij (midpoint of its certified ball)", shrink=0.9)
    bottom.suptitle("the certified plans (midpoints of their balls; rows a, columns b)", fontsize=9)
    return png_bytes(fig, "certified bounds on max_ij |log P^_ij - log P*_ij|: " + "; ".join(f"eps = {r['eps']}: " + (upper(r["bound"]) if r["certified"] else "not certified") for r in runs))


def _points(text: dict[str, Any]) -> list[str]:
    """Tick labels of a text's points: the point, then its weight."""
    return [f"({', '.join(x)})  {a}" for x, a in zip(text["x"], text["a"])]


def _heatmap(
    ax: Any, plan: list[list[dict[str, str]]], rows: list[str] | None, cols: list[str] | None, written: int = MAX_WRITTEN, size: float = 7, vmax: float | None = None
) -> Any:
    """A plan's balls drawn by their midpoints (floats for drawing only), written in the cells when few;
    ``vmax``: the top of the colour scale (default the plan's largest)."""
    P = [[float(QQ.from_json(b["mid"])) for b in row] for row in plan]
    image = ax.imshow(P, cmap="Blues", vmin=0, vmax=vmax, interpolation="nearest", aspect="auto")
    n, m = len(P), len(P[0])
    ax.set_yticks(range(n), rows if rows is not None else [str(i) for i in range(n)], fontsize=7 if rows else 8)
    ax.set_xticks(range(m), cols if cols is not None else [str(j) for j in range(m)], fontsize=7 if cols else 8, rotation=30 if cols else 0, ha="right" if cols else "center")
    if n * m <= written:
        top = max(max(row) for row in P) or 1.0
        for i, row in enumerate(plan):
            for j, b in enumerate(row):
                ax.text(j, i, shown(b["mid"], 2), ha="center", va="center", fontsize=size, color="white" if P[i][j] > top / 2 else "black")
    return image
