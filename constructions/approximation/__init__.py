"""Certified universal approximation through MaxMin (docs/approximation.md).

``targets``: the functions approximated (a library and user expressions, with
their stated Lipschitz or Hölder constants); ``grid``: the sample grid and the
rounded samples; ``mcshane``: the McShane-type extension g(x) = max_i (y_i -
L ||x - x_i||_inf) in closed form and as one RASP program; ``boxes``: exact
bounds of g on dyadic boxes; ``branch_bound``: the certified sup-norm error
sup |f - g| by interval branch-and-bound.
"""
