"""rasp_language: see docs/design.md, "Layout"."""
