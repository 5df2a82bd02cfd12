"""``attncert plot CLAIM``: a certificate, verified first, or a fresh proof, drawn as a PNG (matplotlib,
imported by the claim's plot module only)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attncert.exact.errors import AttncertError
from attncert.exact.limits import limits
from attncert.proofs.cli import output
from attncert.proofs.cli.options import EXIT_FAILS, EXIT_HOLDS, limits_of, resolve_sizes
from attncert.proofs.core.registry import load_claim

#: Claims with a plot: name -> the module function giving PNG bytes from a certificate.
PLOTS = {
    "lipschitz_rates": ("attncert.proofs.approximation.plot", "rates_png"),
    "sinkhorn_universality": ("attncert.proofs.sinkhorn.plot", "universality_png"),
    "sinkhorn_transformer": ("attncert.proofs.sinkhorn.plot", "coupling_png"),
    "sinkhorn_convergence": ("attncert.proofs.sinkhorn.plot", "convergence_png"),
    "compiled_softmax": ("attncert.proofs.compiled.plot", "softmax_bound_png"),
    "rasp_program": ("attncert.proofs.rasp_language.program", "selections_png"),
}


def cmd_plot(args: argparse.Namespace) -> int:
    import importlib

    from attncert.exact.certificate import read_certificate
    from attncert.proofs.core.cost import refuse_over_limits
    from attncert.proofs.core.verify import DOES_NOT_HOLD, NOT_PROVEN, OK, verify_file

    claim = load_claim(args.claim)
    resolve_sizes(args, claim.params)
    target = output.target(args.out, Path("plots") / f"{claim.name}.png")  # before the work
    lim = limits_of(args)
    if args.certificate:
        outcome = verify_file(args.certificate, lim)
        if outcome.status not in (OK, DOES_NOT_HOLD, NOT_PROVEN):  # a genuine certificate is drawn, whether its claim holds or not
            raise AttncertError(f"{args.certificate} does not verify ({outcome.status}: {outcome.reason}); not plotting it")
        doc = read_certificate(args.certificate)
        if doc["claim"] != claim.name:
            raise AttncertError(f"{args.certificate} is a {doc['claim']} certificate, not {claim.name}")
    else:
        params = {p.name: getattr(args, p.name) for p in claim.params}
        refuse_over_limits(claim, params, lim, writes=False)  # the plot is written, not the certificate
        with limits(lim):
            doc = claim.prove(**params)
    module, function = PLOTS[claim.name]
    where = output.emit(target, getattr(importlib.import_module(module), function)(doc), not args.out)
    print(f"{claim.name}: plot written to {where}", file=sys.stdout if target else sys.stderr)
    return EXIT_HOLDS if doc["result"]["holds"] else EXIT_FAILS
