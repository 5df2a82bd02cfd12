"""identity: see docs/design.md, "Layout"."""
