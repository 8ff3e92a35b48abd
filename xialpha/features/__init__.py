"""Features: text -> TF-IDF vectors (`Preprocessing`), Gram matrices and kernels derived from them.

No Dask, no file writing here: these functions take and return in-memory arrays.
"""

from xialpha.features.gram import (
    DEFAULT_GRAM_LIMIT_BYTES,
    GramTooLarge,
    check_gram_fits,
    gram_nbytes,
    linear_gram,
    row_sq_norms,
)
from xialpha.features.kernels import KERNELS, Kernel
from xialpha.features.preprocessing import FittedPreprocessing, Preprocessing

__all__ = [
    "DEFAULT_GRAM_LIMIT_BYTES",
    "FittedPreprocessing",
    "GramTooLarge",
    "KERNELS",
    "Kernel",
    "Preprocessing",
    "check_gram_fits",
    "gram_nbytes",
    "linear_gram",
    "row_sq_norms",
]
