"""``attncert verify``: re-check certificates independently (docs/design.md, "Certificates").

For each file:

1. read it within the limits in force, check the format tag and the sha256;
2. hand it to its claim's checker (from the registry; nothing named in the file is
   imported or executed), which recomputes the reference from the recorded inputs
   alone, re-evaluates the recorded graph with registered functions only, and
   decides the recorded relation in the recorded domain.

Two questions, answered apart: whether the document checks (it is *genuine*: the sha256 matches and its
claim's check and the rebuild find every recorded value to be the recomputed one), and, if so, what it
proves: its claim holds, it does not (a tracr model's counterexamples, a stated Lipschitz constant a grid
pair violates), or its method did not decide (a compositional proof that does not go through, no beta
within tol at the working precision, a grid pair the enclosures cannot decide: the claim may hold). Each
file gets one line, starting with one of

============== ==== ================================================================================
outcome        exit meaning
============== ==== ================================================================================
OK             0    genuine, and its claim holds
DOES-NOT-HOLD  1    genuine, and it records, as the check finds, that its claim does not hold: a
                    confirmed counterexample or a decided violation (the exit code ``prove`` gives)
BAD            2    malformed, over a limit, or of an unknown claim: nothing was decided
REJECTED       3    not to be trusted: the sha256 does not match, or the check or the rebuild finds
                    a recorded value, the verdict included, that is not the recomputed one
NOT-PROVEN     4    genuine, and it records, as the check finds, that its method did not establish
                    the claim, with nothing showing that it does not hold: the claim may hold
============== ==== ================================================================================

NOT-PROVEN has its own code, 4, so that 0 to 3 keep their meanings (a script reading 1 as "disproven" is
not misled); several files exit with the worst, by :data:`SEVERITY`, not by the largest code: REJECTED
over BAD over NOT-PROVEN over DOES-NOT-HOLD over OK (an undecided file is less settled than a disproven
one, and one that cannot be trusted or checked least). These words and codes are stable (README.md,
docs/certificate.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from attncert.exact.certificate import FORMAT, load_certificate_bytes, read_bounded, read_certificate
from attncert.exact.errors import AttncertError, CertificateError, ParseError
from attncert.exact.limits import Limits, current as current_limits, limits
from attncert.proofs.core.cost import refuse_over_limits
from attncert.proofs.core.figures import abbreviate
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import INDEX, load_claim

#: The format tags of the model files ``attncert compile`` writes (constructions/compiler/model.py).
MODEL_FORMATS = ("attncert-model/",)

OK, DOES_NOT_HOLD, BAD, REJECTED, NOT_PROVEN = "OK", "DOES-NOT-HOLD", "BAD", "REJECTED", "NOT-PROVEN"
EXIT = {OK: 0, DOES_NOT_HOLD: 1, BAD: 2, REJECTED: 3, NOT_PROVEN: 4}
#: The outcomes from the best to the worst: several files exit with the worst one's code.
SEVERITY = (OK, DOES_NOT_HOLD, NOT_PROVEN, BAD, REJECTED)
#: verify DIR only: a JSON file below the folder that is not an attncert certificate (a model ``attncert
#: compile`` wrote, a configuration); it is named, with why, and counts toward no exit code.
SKIPPED = "SKIPPED"
#: The width of the outcome column: the lines of several files align.
WIDTH = max(map(len, EXIT))


@dataclass(frozen=True)
class Outcome:
    path: str
    status: str  # OK, DOES_NOT_HOLD, NOT_PROVEN, BAD or REJECTED
    claim: str
    sizes: str
    relation: str
    reason: str

    def line(self) -> str:
        what = " ".join(x for x in (self.claim, self.sizes, self.relation) if x)
        tail = "" if self.status == OK else f": {self.reason}"
        return f"{self.status:{WIDTH}} {self.path}{'  ' + what if what else ''}{tail}"


def verify_document(doc: dict[str, Any]) -> tuple[str, str]:
    """(status, reason) for a hash-checked document: REJECTED when the check or the rebuild finds a
    problem; otherwise the document is genuine, OK when it records that its claim holds, DOES-NOT-HOLD
    when it records (as the check found) that it does not, NOT-PROVEN when the check found only that its
    method did not decide (``Findings.undecided``, proofs/checkers/result.py)."""
    claim = load_claim(doc["claim"]) if isinstance(doc.get("claim"), str) and doc["claim"] in INDEX else None
    if claim is None:
        return BAD, f"unknown claim {doc.get('claim')!r:.40}"
    params = doc.get("params")
    if not isinstance(params, dict):
        raise ParseError('certificate field "params" must be an object')
    # A parameter is an integer or a string, as the command line gives it: a claim that proves again with a
    # recorded value would otherwise echo true for 1 into its recomputation, where the comparison cannot see it.
    odd = next((k for k, v in params.items() if isinstance(v, bool) or not isinstance(v, (int, str))), None)
    if odd is not None:
        raise ParseError(f"parameter {odd!r:.40} must be an integer or a string, the certificate records {type(params[odd]).__name__}")
    # The recorded parameters must be within the limits in force before anything is rebuilt from them (the
    # document's own size was checked when it was read: the estimate of it is not). The cost model reads what
    # the parameters do not say from the recorded inputs (a recorded cost's range: Claim.recorded).
    refuse_over_limits(claim, params, current_limits(), writes=False, doc=doc)
    undecided: list[str] = []
    if claim.check is not None:
        found = claim.check(doc)
        undecided = getattr(found, "undecided", [])
        problems = found or rebuilt_differences(claim, doc)
    elif claim.verify is not None:
        problems = claim.verify(doc)
    else:
        return REJECTED, f"no independent checker is registered for {claim.name}"
    if problems:
        return REJECTED, "; ".join(problems)
    holds = doc["result"].get("holds") if isinstance(doc.get("result"), dict) else None
    if holds is True:
        return OK, ""
    if holds is False and undecided:
        return NOT_PROVEN, f"genuine; the claim is not proven (it may hold): {undecided[0]}"
    if holds is False:
        return DOES_NOT_HOLD, f"genuine; the claim does not hold: {disproof(doc)}"
    return REJECTED, 'the certificate does not record whether its claim holds ("result.holds" is not a boolean)'


def disproof(doc: dict[str, Any]) -> str:
    """What a genuine certificate whose claim does not hold shows, in a few words: its counterexamples
    where it counts them (the first one listed), else the claim's own line (``Claim.summary``)."""
    result, outputs = doc["result"], doc.get("outputs")
    count, total = result.get("counterexamples"), result.get("inputs")
    if isinstance(count, int) and isinstance(total, int) and count:
        listed = outputs.get("counterexamples") if isinstance(outputs, dict) else None
        first = listed[0].get("input") if isinstance(listed, list) and listed and isinstance(listed[0], dict) else None
        shown = f", the first {_input_text(first)}" if isinstance(first, list) else ""
        return f"{count:,} of {total:,} inputs are counterexamples{shown}"
    claim = load_claim(doc["claim"])
    line = claim.summary(doc) if claim.summary is not None else None
    return line.removeprefix("does not hold: ") if line else "its result records holds = false"


def _input_text(tokens: list[Any]) -> str:
    """A recorded input as its tokens: ``{"s": "a"}`` is a, ``{"q": "1/2"}`` is 1/2."""
    shown = [next(iter(t.values())) if isinstance(t, dict) and len(t) == 1 else t for t in tokens[:12]]
    return "[" + ", ".join(map(str, shown)) + (", ...]" if len(tokens) > 12 else "]")


def verify_file(path: str | Path, lim: Limits | None = None) -> Outcome:
    return _verify(str(path), lambda: read_certificate(path), lim)


def verify_found(path: str | Path, lim: Limits | None = None) -> Outcome:
    """A file found below a folder: SKIPPED when it is JSON but not an attncert certificate, else as
    :func:`verify_file` says (a file that cannot be read or parsed is verified, and so BAD)."""
    try:
        with limits(lim or Limits()):
            data = read_bounded(path)
    except AttncertError:
        return verify_file(path, lim)
    why = not_a_certificate(data)
    return Outcome(str(path), SKIPPED, "", "", "", why) if why else verify_bytes(data, str(path), lim)


def not_a_certificate(data: bytes) -> str | None:
    """Why these bytes, a JSON document, are not an attncert certificate; None when they may be one.

    Only a document that cannot be a damaged certificate is skipped: a JSON value that is not an object,
    or an object with neither the format tag ``attncert/1`` nor a ``claim`` or ``sha256`` member. Bytes
    that are not JSON, and objects that look like a certificate, are verified (and then BAD or REJECTED)."""
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return f"not an attncert certificate (a JSON {type(doc).__name__})"
    fmt = doc.get("format")
    if fmt == FORMAT or "claim" in doc or "sha256" in doc:
        return None
    if isinstance(fmt, str) and fmt.startswith(MODEL_FORMATS):
        return f"not a certificate: a compiled model (format {fmt}, as attncert compile writes)"
    return f"not an attncert certificate (format {fmt!r:.40})" if fmt is not None else 'not an attncert certificate (no "format" member)'


def verify_bytes(data: bytes, name: str = "<bytes>", lim: Limits | None = None) -> Outcome:
    """Verify a certificate given as bytes (as :func:`verify_file` does a file)."""

    return _verify(name, lambda: load_certificate_bytes(data), lim)


def _verify(name: str, read: Callable[[], dict[str, Any]], lim: Limits | None) -> Outcome:
    claim = sizes = relation = ""
    with limits(lim or Limits()):
        try:
            doc = read()
            claim = str(doc.get("claim"))[:40]
            params = doc.get("params") if isinstance(doc.get("params"), dict) else {}
            sizes = abbreviate(",".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "seed" and isinstance(v, (int, str))), 80)
            relation = str(doc["result"].get("relation")) if isinstance(doc.get("result"), dict) else ""
            status, reason = verify_document(doc)
        except CertificateError as e:
            hash_problem = "sha256 mismatch" in str(e)
            status, reason = (REJECTED if hash_problem else BAD), str(e)
        except AttncertError as e:
            status, reason = BAD, str(e)
        except RecursionError:
            status, reason = BAD, "document nested too deeply"
        except MemoryError:
            status, reason = BAD, "out of memory while checking it (docs/limits.md)"
        except (ValueError, TypeError, KeyError, IndexError, AttributeError, ArithmeticError) as e:
            # A document that passes the schema checks but still breaks a checker is malformed.
            status, reason = BAD, f"malformed certificate ({type(e).__name__}: {str(e)[:120]})"
    return Outcome(name, status, claim, sizes, relation, reason.splitlines()[0] if reason else "")


def exit_code(outcomes: list[Outcome]) -> int:
    """The worst outcome's code (REJECTED 3, BAD 2, NOT-PROVEN 4, DOES-NOT-HOLD 1, OK 0, in that order, by
    :data:`SEVERITY`); a skipped file has none."""
    return EXIT[max((o.status for o in outcomes if o.status != SKIPPED), key=SEVERITY.index, default=OK)]
