"""Exact optimal transport claims (issue 34): importing this package registers transport_plan."""

from attncert.proofs.transport import plan  # noqa: F401
