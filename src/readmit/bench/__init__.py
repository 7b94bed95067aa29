"""The evaluation harness: return episodes, comparison methods, the paper's metrics, reports.

Every method sees the same post-absence checkpoint of an episode and keeps its
own memory context; failures stay in the denominator.
"""
