"""Differentially private LDA by the method of moments (paper 004; ``docs/math/lda.md``).

* :mod:`.corpus` - synthetic LDA corpora and the population moments;
* :mod:`.moments` - the unbiased estimators M1, M2, M3 from word counts (M3 projected, no D^3 array);
* :mod:`.recovery` - whitening, the robust tensor power method, topics and alpha, the topic error;
* :mod:`.sensitivity` - global and local L2 sensitivities of the data-flow edges, with explicit constants;
* :mod:`.configurations` - the four noise configurations, their conditions and budgets, and
  propose-test-release for configuration 2.
"""
