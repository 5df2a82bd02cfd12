"""Error types of attncert.

Every error a user can provoke with bad input derives from :class:`AttncertError`.
The command line turns these into one line on stderr and exit code 2; anything
else is a bug and is allowed to show a traceback.
"""

from __future__ import annotations


class AttncertError(Exception):
    """A user-facing error: bad input, an impossible request, a malformed file."""


class ParseError(AttncertError, ValueError):
    """A value could not be read as the number, matrix or document it should be."""


class LimitExceeded(ParseError):
    """A document exceeds a configured size limit (digits, entries, nesting)."""


class NotInFieldError(AttncertError, ArithmeticError):
    """An operation would leave the exact field, e.g. exp of a non-rational EE element."""


class ExactZeroDivision(AttncertError, ZeroDivisionError):
    """Division by a value that is exactly zero."""


class UndecidedError(AttncertError, ArithmeticError):
    """A comparison that the domain cannot decide (a ball that contains zero)."""


class CertificateError(AttncertError):
    """A certificate document is malformed, of the wrong format, or fails its hash."""
