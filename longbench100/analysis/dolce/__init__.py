"""Dolce focus categories: probe a model with short windows of each problem's context and fit, per
problem, the length ``lambda`` of the shortest sufficient span and the number ``k`` of such spans.

Modules: ``closed_forms`` (pi and rho~), ``units`` and ``prompts`` (cutting a stored prompt into
context units), ``probes`` (the probe data folder), ``outcomes`` (scoring replies, IDK), ``oracle``
(outcomes from our own provenance), ``algorithm1`` (the paper's estimator, the default), ``fit``
(the refined EM), ``estimators`` (the choice between them), ``categories`` (the rule I-V and "not
solved"), ``simulate`` (outcomes from known parameters), ``pipeline`` (probes + outcomes ->
dolce.json) and ``chart`` (the per-task chart and table). The method is restated in docs/dolce.md.
"""
