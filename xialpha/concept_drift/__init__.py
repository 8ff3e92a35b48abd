"""Concept-drift checks without Dask: window fits and decisions (`windows`), stored rows and
reports (`outcome`). Reading a stream and fanning its fits out on a cluster is `xialpha.jobs.drift_check`."""
