"""The per-block spine shared by the families that form classes block by block.

* :mod:`~sparkanon.per_block.plan` - the top of a Mondrian-style tree of blocks, planned
  on the driver from per-node counts;
* :mod:`~sparkanon.per_block.cluster` - per top block: the rest of the tree, then the
  algorithm on every leaf block and the repair step;
* :mod:`~sparkanon.per_block.reconcile` - rows no block could place join the nearest
  block's classes (or a residual class);
* :mod:`~sparkanon.per_block.group` - the three in order (:func:`group_rows`).

It sits between the runner's shared stages (:mod:`sparkanon.stages`) and the families
(:mod:`sparkanon.families`): it imports the first and is imported by the second.
"""
