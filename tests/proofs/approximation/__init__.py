"""approximation: see docs/design.md, "Layout"."""
