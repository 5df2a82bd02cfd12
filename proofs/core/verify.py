"""``attncert verify``: re-check certificates independently (docs/design.md, "Certificates").

For each file:

1. read it within the limits in force, check the format tag and the sha256;
2. hand it to its claim's checker (from the registry; nothing named in the file is
   imported or executed), which recomputes the reference from the recorded inputs
   alone, re-evaluates the recorded graph with registered functions only, and
   decides the recorded relation in the recorded domain.

Outcomes: ``OK`` (exit 0), ``FAIL`` when a well-formed certificate does not hold or
was tampered with (exit 1), ``BAD`` when the file is malformed or over a limit
(exit 2). Each file gets one line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from attncert.exact.certificate import load_certificate_bytes, read_certificate
from attncert.exact.errors import AttncertError, CertificateError, ParseError
from attncert.exact.limits import Limits, current as current_limits, limits
from attncert.proofs.core.cost import refuse_over_limits
from attncert.proofs.core.rebuild import rebuilt_differences
from attncert.proofs.core.registry import INDEX, load_claim

OK, FAIL, BAD = "OK", "FAIL", "BAD"
EXIT = {OK: 0, FAIL: 1, BAD: 2}


@dataclass(frozen=True)
class Outcome:
    path: str
    status: str  # OK, FAIL or BAD
    claim: str
    sizes: str
    relation: str
    reason: str

    def line(self) -> str:
        what = " ".join(x for x in (self.claim, self.sizes, self.relation) if x)
        tail = "" if self.status == OK else f": {self.reason}"
        return f"{self.status:4} {self.path}  {what}{tail}"


def verify_document(doc: dict[str, Any]) -> tuple[str, str]:
    """(status, reason) for a hash-checked document."""
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
    # document's own size was checked when it was read: the estimate of it is not).
    refuse_over_limits(claim, params, current_limits(), writes=False)
    if claim.check is not None:
        problems = claim.check(doc) or rebuilt_differences(claim, doc)
    elif claim.verify is not None:
        problems = claim.verify(doc)
    else:
        return FAIL, f"no independent checker is registered for {claim.name}"
    result = doc.get("result")
    if not problems and not (isinstance(result, dict) and result.get("holds") is True):
        problems = ["the certificate records that its claim does not hold"]
    return (FAIL, "; ".join(problems)) if problems else (OK, "")


def verify_file(path: str | Path, lim: Limits | None = None) -> Outcome:
    return _verify(str(path), lambda: read_certificate(path), lim)


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
            sizes = ",".join(f"{k}={v}" for k, v in sorted(params.items()) if k != "seed" and isinstance(v, (int, str)))[:80]
            relation = str(doc["result"].get("relation")) if isinstance(doc.get("result"), dict) else ""
            status, reason = verify_document(doc)
        except CertificateError as e:
            hash_problem = "sha256 mismatch" in str(e)
            status, reason = (FAIL if hash_problem else BAD), str(e)
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
    return max((EXIT[o.status] for o in outcomes), default=0)
