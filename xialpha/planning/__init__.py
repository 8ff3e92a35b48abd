"""What a sweep trains, without Dask: the plan of its configurations, their store keys and fit
batches (`plan`), and whether a sweep resumed under its id is the experiment it was, or how many
of its planned rows are still missing (`experiment`). `xialpha.jobs` runs a plan on a cluster;
selection and reports read how complete a sweep is from here, importing no `xialpha.jobs` module.
"""
