"""Selection: choosing configurations from stored estimates, and testing the choice.

objective / ranking / selector   what to optimise; the one ranking engine (`rank`: candidates best
                                 first, one tie rule); choosing per category or --global, every
                                 category at once as columns
selected                         a selection in one typed shape (`Selection`: its rows, one per
                                 category, in the store's "selections" columns), which storing,
                                 reports, compare and the C ladder read
significance                     Yang & Liu 1999's s-, S- and T-tests and McNemar (xialpha.stats) against
                                 the runners-up; a runner-up no test could separate is untested
records / workflow               saved selections (the same one saved twice keeps its id; reading them
                                 back); selecting from a stored sweep, as `xialpha select` and
                                 `xialpha.select` do
options                          what a selection is asked for (the flags and parameters, one object)
edges / c_extension              where a choice lies on its C grid (at its edge, or a flat estimate);
                                 where a C ladder grows next
comparison                       two saved selections side by side (`xialpha compare`)
bounds / certification / claims  test-set metrics with one-sided bounds, sealed test sets

Trained models of a selection are `xialpha.models`; what reports show of it, `xialpha.reports`.
"""
