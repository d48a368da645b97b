"""Differentially private LDA by the method of moments (paper 004) - see ``docs/math/lda.md``."""
