"""attncert.constructions: RASP as networkx graphs and every construction built on it."""
