"""Selection: choosing configurations from stored estimates, and testing the choice.

objective / ranking / selector   what to optimise, candidates best first, per category or --global
significance                     Yang & Liu 1999's s-, S- and T-tests and McNemar (xialpha.stats) against
                                 the runners-up
records / workflow               a selection as rows of the store's "selections" dataset; selecting
                                 from a stored sweep, as `xialpha select` and `xialpha.select` do
options                          what a selection is asked for (the flags and parameters, one object)
edges                            where a choice lies on its C grid (at its edge, or a flat estimate)
bounds / certification           test-set metrics with one-sided bounds, sealed test sets

Trained models of a selection are `xialpha.models`; what reports show of it, `xialpha.reports`.
"""
