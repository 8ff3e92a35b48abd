"""xialpha: model selection for SVM text classifiers from one training per candidate.

The xi-alpha estimates (Joachims 2000) bound the leave-one-out error of a soft-margin SVM
from the solution of a single training run; xialpha fans such trainings out on Dask, stores
the estimates in Parquet and selects configurations from them.
"""

__version__ = "0.1.0"
