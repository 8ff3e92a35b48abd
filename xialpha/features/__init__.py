"""Features: text -> TF-IDF vectors (`Preprocessing`), Gram matrices and kernels derived from them.

No Dask, no file writing here: these functions take and return in-memory arrays. The names below
are imported when first used, so that a spec's `Preprocessing` and `Kernel` are checked without
numpy or scipy (`xialpha.features.preprocessing` and `xialpha.features.kernels` import them where
they compute).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xialpha.lazy import lazy_names

if TYPE_CHECKING:
    from xialpha.features.gram import GramTooLarge, check_gram_fits, gram_nbytes, linear_gram, row_sq_norms
    from xialpha.features.kernels import DEFAULT_GRAM_LIMIT_BYTES, KERNELS, Kernel
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
__getattr__ = lazy_names(
    __name__,
    {
        "gram": ("GramTooLarge", "check_gram_fits", "gram_nbytes", "linear_gram", "row_sq_norms"),
        "kernels": ("DEFAULT_GRAM_LIMIT_BYTES", "KERNELS", "Kernel"),
        "preprocessing": ("FittedPreprocessing", "Preprocessing"),
    },
)
