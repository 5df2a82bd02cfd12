"""sinkhorn: see docs/design.md, "Layout"."""
