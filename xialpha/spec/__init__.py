"""Specs: TOML files validated into frozen dataclasses, the input of sweeps and drift checks.

`xialpha.spec.sweep` (`load_spec`, `parse_spec`, `SweepSpec`) and `xialpha.spec.drift`
(`load_drift_spec`, `DriftSpec`) build on the checked TOML tables of `xialpha.spec.tables`;
`xialpha.spec.stored` finds the spec a stored sweep ran, to refit or certify its choices.
Specs know nothing of Dask: jobs run them.
"""
