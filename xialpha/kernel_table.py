"""The kernels xialpha knows and the parameters each takes (as scikit-learn's SVC names them): the one
table that xialpha.estimators (checks kernel_params) and xialpha.features (the Kernel spec) both
read. It lives outside both packages because estimators import nothing from the other layers."""

KERNEL_PARAMETERS = {"linear": (), "rbf": ("gamma",), "poly": ("gamma", "degree", "coef0"), "sigmoid": ("gamma", "coef0")}
KERNELS = tuple(KERNEL_PARAMETERS)
PARAMETER_NAMES = tuple(dict.fromkeys(name for names in KERNEL_PARAMETERS.values() for name in names))  # gamma, degree, coef0
