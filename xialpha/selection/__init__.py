"""Selection: choosing configurations from stored estimates, and what follows from a choice.

objective / ranking / selector   what to optimise, candidates best first, per category or --global
stats / significance             seed 002's s-, S- and T-tests and McNemar against the runners-up
records                          a selection as rows of the store's "selections" dataset
context / refit / artifact       the sweep's data again, the chosen configs trained, saved, loaded
prediction                       documents in, categories and decision values out
bounds / certification           test-set metrics with one-sided bounds, sealed test sets
report / report_html / display   terminal tables and the HTML page

The modules import numpy and pandas; `choices` holds the CLI options without them.
"""
