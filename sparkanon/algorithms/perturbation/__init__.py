"""The randomization (perturbation) family's pure pieces (Aggarwal 2015, section 20.2): numpy only.

Rows are published with their attributes perturbed; the aggregate distributions are
reconstructed from histograms of the perturbed values and mined. No Spark, no engine and
no config imports here: the family (:mod:`sparkanon.families.perturbation.family`) wires them.

* :mod:`~sparkanon.algorithms.perturbation.noise` - uniform and Gaussian additive noise
  drawn from the run's secret key (:class:`~sparkanon.randomness.RunKey`, a stream per
  attribute, the row's internal id as counter), :class:`NoiseSpec`
  (its cdf, pdf, interval probabilities and Agrawal and Srikant's 2000 privacy width) and
  ``scale_for_privacy``.
* :mod:`~sparkanon.algorithms.perturbation.randomized_response` - the PRAM / k-ary
  randomized response matrix of a retention or an epsilon, its local-DP epsilon, and
  ``randomize``.
* :mod:`~sparkanon.algorithms.perturbation.perturb` - one batch perturbed (what the
  ``perturb`` stage runs); :mod:`~sparkanon.algorithms.perturbation._params` the
  ``algorithm`` section of a perturbation job.
* :mod:`~sparkanon.algorithms.perturbation.reconstruct` - distribution reconstruction:
  the iterative Bayes update (Agrawal and Srikant 2000; Aggarwal 2015, eq. 20.5), EM
  (Agrawal and Aggarwal 2001), and for categorical attributes the iterative Bayesian
  update and the matrix-inversion estimate.
* :mod:`~sparkanon.algorithms.perturbation.naive_bayes` - naive Bayes over per-class
  reconstructed distributions (Aggarwal 2015, section 20.2.2).
"""
