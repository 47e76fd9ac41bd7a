"""The randomization (perturbation) family's pure pieces (Aggarwal 2015, section 20.2).

Pure numpy, no Spark, no engine, no config: the family that publishes perturbed rows is
written against these modules.

- :mod:`~sparkanon.algorithms.perturbation.noise`: counter-based uniforms (a pure function of
  seed, stream and row id), uniform and Gaussian additive noise, :class:`NoiseSpec` (its
  cdf, pdf, interval probabilities and Agrawal and Srikant's 2000 privacy width) and
  ``scale_for_privacy``.
- :mod:`~sparkanon.algorithms.perturbation.randomized_response`: the PRAM / k-ary randomized
  response matrix of a retention or an epsilon, its local-DP epsilon, and ``randomize``.
"""
