"""Size expressions: integers written in size symbols, for templates that serve every size (:mod:`.expr`)."""
