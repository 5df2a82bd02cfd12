"""core: see docs/design.md, "Layout"."""
