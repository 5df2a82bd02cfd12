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


class NotRealError(AttncertError, ArithmeticError):
    """A value that is not a real number, e.g. a negative number to a non-integer power."""


class UndecidedError(AttncertError, ArithmeticError):
    """A comparison that the domain cannot decide (a ball that contains zero)."""


class CertificateError(AttncertError):
    """A certificate document is malformed, of the wrong format, or fails its hash."""


class FloatRefused(ParseError, TypeError):
    """A binary float (Python or numpy) was given where an exact number is needed (QQ, EE).

    A float is a binary approximation: 0.1 is stored as 3602879701896397/2^55, so
    reading it silently would make an "exact" result exact about the wrong number.
    Decimal strings are exact ("0.1" is 1/10). A ParseError (one line, exit 2 on the
    command line) and a TypeError (the operand type is wrong, as for ``fmpq + float``).
    """


class OutputError(AttncertError):
    """An output target that cannot or must not be written (a directory, a device, no permission, a full disk)."""
