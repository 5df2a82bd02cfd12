"""Proof scripts for the universal simulator and the results built on it."""
