"""every_size: see docs/design.md, "Layout"."""
