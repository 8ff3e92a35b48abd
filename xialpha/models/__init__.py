"""Trained models of a selection, as prediction needs them: one SVM per category and the fitted
preprocessings they read (`trained`), saved and loaded as a deployable artefact of data only
(`artifact`), and documents in, categories and decision values out (`prediction`). The chosen
configurations are trained on the sweep's cluster by `xialpha.jobs.refit`.
"""
