"""Split names with a meaning of their own, importing nothing: the spec layer reads them without the
corpus machinery."""

VALIDATION_SPLIT = "validation"  # the split a spec's validation_fraction carves from its training split
