"""Pictures drawn with matplotlib (Agg backend, imported only while drawing)."""
