"""The randomization (perturbation) family's pure pieces (Aggarwal 2015, section 20.2): numpy only.

Rows are published with their attributes perturbed; the aggregate distributions are
reconstructed from histograms of the perturbed values and mined. No Spark, no engine and
no config imports here: the family wires these modules.

* :mod:`~sparkanon.algorithms.perturbation.reconstruct` - distribution reconstruction:
  the iterative Bayes update (Agrawal and Srikant 2000; Aggarwal 2015, eq. 20.5), EM
  (Agrawal and Aggarwal 2001), and for categorical attributes the iterative Bayesian
  update and the matrix-inversion estimate.
* :mod:`~sparkanon.algorithms.perturbation.naive_bayes` - naive Bayes over per-class
  reconstructed distributions (Aggarwal 2015, section 20.2.2).
"""
