"""``attncert plot compiled_softmax``: the certified bound B(beta) against the inverse temperature beta.

For each listed beta the certificate bounds max_k |softmax_beta model(X)_k - AHAT model(X)_k|
on the recorded input X, over every position (B) and over the output block
(B_out). Both are drawn against beta on log scales (exact rationals drawn as
powers of ten, :mod:`.axes`), with the tolerance, tracr's fixed softmax
coldness (100), and the least listed beta whose bound is within the tolerance.
The bound flattens where it meets the balls' own width (2^-prec): past that beta
the softmax and average-hard outputs agree to the working precision.
"""

from __future__ import annotations

from typing import Any

from attncert.proofs.core.figures import upper
from attncert.proofs.core.axes import log10, png_bytes, powers_of_ten, shown


def softmax_bound_png(doc: dict[str, Any]) -> bytes:
    """The PNG of a compiled_softmax certificate: B(beta) and B_out(beta) against beta."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows, res, p = doc["outputs"]["softmax"], doc["result"], doc["params"]
    x = [log10(r["beta"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 5.5), dpi=120, layout="constrained")
    ax.plot(x, [log10(r["bound"]) for r in rows], "o-", color="C0", label="B(beta): every position")
    ax.plot(x, [log10(r["bound_output_block"]) for r in rows], "s--", color="C1", label="B_out(beta): the output block")
    for xi, r in zip(x, rows):
        ax.annotate(f"beta = {r['beta']}", (xi, log10(r["bound"])), textcoords="offset points", xytext=(4, 6), fontsize=8)
    ax.axhline(log10(p["tol"]), color="grey", linestyle="--", label=f"tol = {shown(p['tol'])}")
    coldness = doc["reference"]["tracr_coldness"]
    ax.axvline(log10(str(coldness)), color="C2", linestyle=":", label=f"tracr's softmax coldness, beta = {coldness}")
    for key, colour, what in (("least_beta_within_tol", "C0", "B"), ("least_beta_within_tol_output_block", "C1", "B_out")):
        if res[key] is not None:
            hit = next(r for r in rows if r["beta"] == res[key])
            bound = hit["bound" if what == "B" else "bound_output_block"]
            ax.plot([log10(hit["beta"])], [log10(bound)], "*", color=colour, markersize=16, markeredgecolor="black", label=f"least listed beta with {what} <= tol: {res[key]}")
    powers_of_ten(ax, "x", x + [log10(str(coldness))])
    powers_of_ten(ax, "y", [log10(r[k]) for r in rows for k in ("bound", "bound_output_block")] + [log10(p["tol"])])
    ax.set_xlabel("inverse temperature beta")
    ax.set_ylabel("certified bound on |softmax - average-hard| (recorded input)")
    ax.set_title(f"compiled {p['of']} ({p['sizes']}, seed {p['seed']}): softmax attention against average-hard,\n{p['prec']}-bit balls, bounds rigorous for the recorded input only", fontsize=10)
    ax.grid(True, alpha=0.3)
    fig.legend(fontsize=8, loc="outside lower center", ncols=3)
    within = f"least listed beta with B <= tol: {res['least_beta_within_tol']}, with B_out <= tol: {res['least_beta_within_tol_output_block']}"
    return png_bytes(fig, f"compiled {p['of']} ({p['sizes']}): certified B(beta) " + ", ".join(f"{r['beta']}: {upper(r['bound'])}" for r in rows) + f"; {within}")
