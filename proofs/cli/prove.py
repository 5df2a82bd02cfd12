"""``attncert prove CLAIM``: one claim proven and its certificate written; ``--estimate`` the cost model's
figures instead; ``--for-all`` (and ``--every SIZES``) the claim for every input (and every size)."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from attncert.exact.errors import ParseError
from attncert.exact.limits import Limits, limits
from attncert.proofs.cli import output
from attncert.proofs.cli.options import EXIT_BAD_INPUT, EXIT_FAILS, EXIT_HOLDS, flags, limits_of, resolve_sizes
from attncert.proofs.core.registry import Claim, load_claim


def cmd_prove(args: argparse.Namespace) -> int:
    from attncert.exact.certificate import certificate_bytes, check_folder
    from attncert.proofs.core.cost import refuse_over_limits

    claim = load_claim(args.claim)
    resolve_sizes(args, claim.params)
    own = any(p.name == "every" for p in claim.params)  # CLAIM_every_size named itself: --every is its own option
    if getattr(args, "every", None) and not getattr(args, "for_all", False) and not own:
        raise ParseError("--every goes with --for-all: it quantifies the sizes of a for-all-inputs proof")
    if getattr(args, "for_all", False):
        claim = _for_all(claim, args)
    # (a size of CLAIM_every_size that CLAIM has no option for, the hierarchy's n, d, dv, takes its default)
    params = {p.name: getattr(args, p.name, p.default) for p in claim.params}
    if params.get("inputs") and claim.build is not None:  # the sizes not given are the input file's
        from attncert.proofs.core.layout_claims import sizes_from_inputs

        given = getattr(args, "_given", set())
        params.update(sizes_from_inputs(claim, params["inputs"], {k: v for k, v in params.items() if k in given}))
    lim = limits_of(args)
    if args.estimate:
        return _print_estimate(claim, params, lim)
    target = output.target(args.out, Path("certificates") / f"{claim.name}.json")  # before the work
    refuse_over_limits(claim, params, lim)
    # An exhaustive claim keeps one resumable file per chunk beside its certificate while it runs
    # (CERTIFICATE.chunks/, unless --chunks names a folder): a run cut short resumes from them, and
    # they are removed once the certificate is written.
    beside = "chunks" in params and params["chunks"] is None and target is not None
    if beside:
        params["chunks"] = f"{target}.chunks"
    elif params.get("chunks"):
        check_folder(params["chunks"], create=True)  # the chunks' own folder is made, never the ones above it
    with limits(lim):
        t0 = time.perf_counter()
        doc = claim.prove(**params)
        elapsed = time.perf_counter() - t0
        data = certificate_bytes(doc)  # refused here, with verify's line, if verify at these limits would refuse it
    where = output.emit(target, data, not args.out)
    if beside:
        shutil.rmtree(params["chunks"], ignore_errors=True)
    with contextlib.redirect_stdout(sys.stdout if target else sys.stderr):
        output.print_table(output.HEADER, [output.summary_row(doc, elapsed)])
        if claim.summary and (line := claim.summary(doc)):
            print(line)
        print(f"certificate: {where}")
    return EXIT_HOLDS if doc["result"]["holds"] else EXIT_FAILS


def _print_estimate(claim: Claim, params: dict[str, Any], lim: Limits) -> int:
    """``prove --estimate``: the cost model's figures, then whether a run at these limits would go ahead or be
    refused, and by which limits (every one it is over, each with the option that raises it). Exits as the run
    would: 2 when it would be refused, else 0."""
    from attncert.exact.errors import LimitExceeded
    from attncert.proofs.core.cost import estimate, refusals

    print(f"{claim.name}: estimate at " + (", ".join(f"{k}={v}" for k, v in params.items() if v is not None) or "its parameters"))
    try:
        cost = estimate(claim, params, lim)
    except LimitExceeded as e:  # a cost model that refuses while it estimates (a target's magnitude, a family's size)
        over = [str(e)]
    else:
        for line in cost.lines():
            print(f"  {line}")
        over = refusals(claim.name, params, cost, lim)
    for line in over:
        print(f"  would be refused: {line}")
    if not over:
        print("  within the limits: the run would go ahead")
    return EXIT_BAD_INPUT if over else EXIT_HOLDS  # as the run would exit: a refusal is a user error


def _for_all(claim: Claim, args: argparse.Namespace) -> Claim:
    """``prove CLAIM --for-all``: the claim CLAIM_identity (docs/identity.md), or with ``--every SIZES``
    CLAIM_every_size (docs/every-size.md); an option of CLAIM that it does not take (a seed, an input file:
    it has no inputs) is refused in one line."""
    identity = load_claim(f"{claim.name}_every_size" if getattr(args, "every", None) else f"{claim.name}_identity")
    kept = {p.name for p in identity.params}
    for p in claim.params:
        if p.name not in kept and getattr(args, p.name) != p.default:
            raise ParseError(f"{flags(p.name)[0]} does not apply with --for-all: {identity.name} proves the claim for every input of its sizes")
    return identity
