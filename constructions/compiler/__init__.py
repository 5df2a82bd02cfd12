"""Compile RASP programs to explicit transformer weights, exactly (docs/compiler.md).

One module per stage, as tracr does; each stage is a pure function:

1. :mod:`.values`   value-set inference: which SOps are data-independent (their
   exact values over the positions) and how many residual dimensions each takes;
2. :mod:`.basis`    the labelled residual basis;
3. :mod:`.blocks`   per-node blocks: an average-hard attention head for each
   Aggregate (numeric score form), an MLP block for each Map / SequenceMap;
4. :mod:`.layers`   layer allocation, from :func:`constructions.rasp.size.schedule`;
5. :mod:`.assemble` assembly into a :class:`~.model.Model`;
6. :mod:`.check`    the model against the RASP evaluation, SOp by SOp, on inputs
   that cover the value sets (run by every compile unless ``check=False``).

The model class, its exact forward pass (a code path separate from the RASP
evaluator) and its JSON form are in :mod:`.model`.
"""

from attncert.constructions.compiler.assemble import compile_graph
from attncert.constructions.compiler.check import CheckFailed, CheckReport
from attncert.constructions.compiler.model import MODEL_CLASS, Model
from attncert.constructions.compiler.values import NotCompilable

__all__ = ["compile_graph", "CheckFailed", "CheckReport", "Model", "MODEL_CLASS", "NotCompilable"]
