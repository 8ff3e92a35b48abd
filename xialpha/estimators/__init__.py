"""Pure numpy/scikit-learn estimators: SVM training, xi-alpha, span, exact LOO and baselines.

No Dask and no file I/O here: these functions run inside workers and in tests alike. Import them
from their modules (`xialpha.estimators.svm.fit_svm`, `xialpha.estimators.xi_alpha.xi_alpha`, ...);
`xialpha.estimators.registry` lists every estimator a sweep computes, and stays light to import
(this package imports nothing, so reading the registry loads no algorithm).

The package itself holds the kernel table, the solvers' range of tolerances and rho's default, as
light to import as the registry (the spec's checks read them).
"""

LINEAR = "linear"  # the kernel of inner products of the features themselves (no Gram matrix needed)

# The kernels xialpha knows and the parameters each takes (as scikit-learn's SVC names them): the one
# table that the estimators' checks and xialpha.features.kernels (the Kernel spec) both read.
KERNEL_PARAMETERS = {
    LINEAR: (),
    "rbf": ("gamma",),
    "poly": ("gamma", "degree", "coef0"),
    "sigmoid": ("gamma", "coef0"),
}
KERNELS = tuple(KERNEL_PARAMETERS)
PARAMETER_NAMES = tuple(
    dict.fromkeys(name for names in KERNEL_PARAMETERS.values() for name in names)
)  # gamma, degree, coef0
TOL_RANGE = (1e-12, 1.0)  # stopping tolerances a solver in float64 can reach, in margin units
METRICS = ("error", "recall", "precision", "f1")  # what every estimate reports: xialpha.estimators.metrics
DEFAULT_RHO = 1.0  # the xi-alpha rho unless one is given (Joachims' recommended estimate; 2: the proven LOO bound)
