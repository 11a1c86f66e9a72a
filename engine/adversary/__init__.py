"""The attack audit of a generalized table (docs/audit.md): homogeneity, background knowledge,
Bayes-optimal disclosure, skewness, similarity, proximity and ε-privacy beliefs, per sensitive attribute.

Pure measures live in ``histogram``, ``diversity``, ``distance`` (numpy only); ``adapters`` is the one place
that calls into the privacy models; ``attacks`` runs them all; ``subject`` loads what is audited (a lattice
node, a published release, the table as it stands) through the warehouse and the backends.
"""
