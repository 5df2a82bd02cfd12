"""Certified universal approximation through MaxMin (issue 13): the claims lipschitz_approx and lipschitz_rates."""
