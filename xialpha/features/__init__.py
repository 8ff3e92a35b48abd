"""Features: text -> TF-IDF vectors (`Preprocessing`), Gram matrices and kernels derived from them.

No Dask, no file writing here: these functions take and return in-memory arrays. The names below
resolve from their modules when first used (`xialpha.lazy`): a report reads the preprocessing's
parameters without the Gram code.
"""

from xialpha.lazy import lazy_exports

__all__, __getattr__ = lazy_exports(
    __name__,
    {
        "gram": (
            "DEFAULT_GRAM_LIMIT_BYTES",
            "GramTooLarge",
            "check_gram_fits",
            "gram_nbytes",
            "linear_gram",
            "row_sq_norms",
        ),
        "kernels": ("KERNELS", "Kernel"),
        "preprocessing": ("FittedPreprocessing", "Preprocessing"),
    },
)
