"""Re-identification risk as ARX reports it (docs/reidentification.md): prosecutor, journalist and marketer
risk, sample uniques and population uniqueness (Pitman, Zayatz, SNB and Dankar et al.'s rule), computed from a
node's equivalence-class size histogram (``ClassSizes``; ``Warehouse.sizes``) and, for journalist risk against
a population table, the population's class sizes at the same node.

Estimators are pure numpy functions of those counts (``classes``, ``prosecutor``, ``journalist``,
``marketer``, ``pitman``, ``zayatz``, ``snb``, ``uniqueness``); ``subject`` loads the counts of a node, a
release or the table as it stands through the warehouse and the backends, and ``summary`` puts every figure
in one document.  This is not ``veil.adversary`` (the attack audit of a release).
"""
