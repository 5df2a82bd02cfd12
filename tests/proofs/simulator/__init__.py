"""simulator: see docs/design.md, "Layout"."""
