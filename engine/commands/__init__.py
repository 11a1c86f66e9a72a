"""The ``veil`` commands, one module for each kind (:mod:`veil.cli` registers them in this order): inspection
(``counts``, ``check``, ``search``), releasing (``init``, ``release``, ``releases``, ``rollback``), auditing
(``audit``, ``risk``, ``report``) and tools (``hierarchy``, ``doctor``, ``schedule``, ``demo``, ``seed``)."""
