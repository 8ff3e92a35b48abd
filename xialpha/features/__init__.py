"""Features: text -> TF-IDF vectors (`Preprocessing`), Gram matrices and kernels derived from them.

No Dask, no file writing here: these functions take and return in-memory arrays. The names below
resolve from their modules when first used (`xialpha.lazy`): a report reads the preprocessing's
parameters without the Gram code, and a spec's `Preprocessing` and `Kernel` are checked without
numpy or scipy (`preprocessing` and `kernels` import them where they compute).
"""

from xialpha.lazy import lazy_exports

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "gram": ("GramTooLarge", "check_gram_fits", "gram_nbytes", "linear_gram", "row_sq_norms"),
        "kernels": ("DEFAULT_GRAM_LIMIT_BYTES", "Kernel"),
        "preprocessing": ("FittedPreprocessing", "Preprocessing"),
    },
)
