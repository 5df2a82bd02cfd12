"""``attncert plot compiled_softmax``: the certified bound B(beta) against the inverse temperature beta.

For each listed beta the certificate bounds max_k |softmax_beta model(X)_k - AHAT model(X)_k|
on the recorded input X, over every position (B) and over the output block
(B_out). Both are drawn against beta on log scales (exact rationals drawn as
powers of ten, :mod:`.axes`), with the tolerance, tracr's fixed softmax
coldness (100), and the least listed beta whose bound is within the tolerance.
The bound flattens where it meets the balls' own width (2^-prec): past that beta
the softmax and average-hard outputs agree to the working precision.

Beside them, the scale of the output: max_k |AHAT model(X)_k|, exact from the certificate. It is a
reference, not a bound (the softmax model's MLPs may take its outputs anywhere: exp and reciprocal units
amplify a leak), but a bound far above it says only that the softmax model is far off on this input. The
y axis is clipped CLIP_DECADES above the higher of that scale and tol: a bound above the clip is drawn on
the clip as an upward triangle, its value written beside it.
"""

from __future__ import annotations

from typing import Any

from attncert.proofs.core.axes import log10, png_bytes, powers_of_ten, shown
from attncert.proofs.core.figures import upper

#: Decades drawn above the output's scale (or tol, if higher) before the y axis is clipped.
CLIP_DECADES = 3


def output_scale(doc: dict[str, Any]) -> float:
    """log10 of max_k |AHAT model(X)_k| over the recorded AHAT output (exact values; mpmath for the logarithm,
    for drawing); nan when the output is 0 everywhere."""
    import mpmath

    from attncert.exact.domains import domain_from_name

    dom = domain_from_name(doc["result"]["domain"])
    values = [dom.from_json(v) for v in doc["outputs"]["ahat"]]
    top = max((abs(v.to_mpmath(30)) if hasattr(v, "to_mpmath") else abs(mpmath.mpf(int(v.p)) / int(v.q)) for v in values), default=0)
    return float(mpmath.log10(top)) if top > 0 else float("nan")


def softmax_bound_png(doc: dict[str, Any]) -> bytes:
    """The PNG of a compiled_softmax certificate: B(beta) and B_out(beta) against beta."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, res, p = doc["outputs"]["softmax"], doc["result"], doc["params"]
    x = [log10(r["beta"]) for r in rows]
    scale = output_scale(doc)
    clip = max(v for v in (scale, log10(p["tol"])) if v == v) + CLIP_DECADES
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120, layout="constrained")
    for key, style, colour, label in (("bound", "o-", "C0", "B(beta): every position"), ("bound_output_block", "s--", "C1", "B_out(beta): the output block")):
        y = [log10(r[key]) for r in rows]
        ax.plot(x, [min(v, clip) for v in y], style, color=colour, label=label)
        over = [(xi, v) for xi, v in zip(x, y) if v > clip]
        if over:  # past the clip: on it, pointing up, its value in the point's label
            ax.plot([xi for xi, _ in over], [clip] * len(over), "^", color=colour, markersize=10, markeredgecolor="black")
    for xi, r in zip(x, rows):
        above = [f"{name} = $10^{{{log10(r[k]):.0f}}}$" for k, name in (("bound", "B"), ("bound_output_block", "B_out")) if log10(r[k]) > clip]
        ax.annotate("\n".join([f"beta = {r['beta']}", *above]), (xi, min(log10(r["bound"]), clip)), textcoords="offset points", xytext=(4, 6), fontsize=8)
    ax.axhline(log10(p["tol"]), color="grey", linestyle="--", label=f"tol = {shown(p['tol'])}")
    if scale == scale:
        ax.axhline(scale, color="C4", linestyle="-.", label="max |AHAT output|: its scale (a reference, not a bound)")
    if any(log10(r[k]) > clip for r in rows for k in ("bound", "bound_output_block")):
        ax.axhline(clip, color="black", linewidth=0.6, label=f"axis clipped {CLIP_DECADES} decades above the scale: ^ a bound above")
    coldness = doc["reference"]["tracr_coldness"]
    ax.axvline(log10(str(coldness)), color="C2", linestyle=":", label=f"tracr's softmax coldness, beta = {coldness}")
    for key, colour, what in (("least_beta_within_tol", "C0", "B"), ("least_beta_within_tol_output_block", "C1", "B_out")):
        if res[key] is not None:
            hit = next(r for r in rows if r["beta"] == res[key])
            bound = hit["bound" if what == "B" else "bound_output_block"]
            ax.plot([log10(hit["beta"])], [log10(bound)], "*", color=colour, markersize=16, markeredgecolor="black", label=f"least listed beta with {what} <= tol: {res[key]}")
    powers_of_ten(ax, "x", x + [log10(str(coldness))])
    powers_of_ten(ax, "y", [min(log10(r[k]), clip) for r in rows for k in ("bound", "bound_output_block")] + [log10(p["tol"]), scale])
    ax.set_xlabel("inverse temperature beta")
    ax.set_ylabel("certified bound on |softmax - average-hard| (recorded input)")
    ax.set_title(f"compiled {p['of']} ({p['sizes']}, seed {p['seed']}): softmax attention against average-hard,\n{p['prec']}-bit balls, bounds rigorous for the recorded input only", fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.legend(fontsize=8, loc="outside lower center", ncols=2)
    within = f"least listed beta with B <= tol: {res['least_beta_within_tol']}, with B_out <= tol: {res['least_beta_within_tol_output_block']}"
    return png_bytes(fig, f"compiled {p['of']} ({p['sizes']}): certified B(beta) " + ", ".join(f"{r['beta']}: {upper(r['bound'])}" for r in rows) + f"; {within}")
