"""lemmas: see docs/design.md, "Layout"."""
