"""compiled: see docs/design.md, "Layout"."""
