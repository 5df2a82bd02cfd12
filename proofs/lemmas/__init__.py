"""One proof script per lemma: transpose, matmul, softmax, relu, maxmin, inverse3."""
