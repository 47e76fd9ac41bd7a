"""What a committed release is worth and what it risks: the commands after the job.

* :mod:`~sparkanon.evaluation.evaluate` - the risk before and after, the attacks and the
  utility of a release (the runner's evaluate stage and ``sparkanon evaluate``);
* :mod:`~sparkanon.evaluation.utility` - utility measures of a release against its input;
* :mod:`~sparkanon.evaluation.reconstruct` - the original distributions of a perturbed
  release rebuilt from its declared noise (``sparkanon reconstruct``).
"""
