"""Pure numpy/scikit-learn estimators: SVM training, xi-alpha, span, exact LOO and baselines.

No Dask and no file I/O here: these functions run inside workers and in tests alike. Import them
from their modules (`xialpha.estimators.svm.fit_svm`, `xialpha.estimators.xialpha.xi_alpha`, ...);
`xialpha.estimators.registry` lists every estimator a sweep computes, and stays light to import
(this package imports nothing, so reading the registry loads no algorithm).
"""
