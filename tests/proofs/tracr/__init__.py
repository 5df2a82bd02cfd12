"""tracr: see docs/design.md, "Layout"."""
