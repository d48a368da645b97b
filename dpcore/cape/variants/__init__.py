"""The noise variants, one module each (its mathematics and its ``ENTRIES``), collected by
:mod:`dpcore.cape.noise_variants`: ``helper`` (a trusted helper draws the e_s), ``secure_sum`` (the helper-free
variant: the sites draw them and compute their sum by a secure sum) and ``discrete`` (the helper-free construction on
the integers: exact discrete Gaussian terms summed exactly on a ring)."""
