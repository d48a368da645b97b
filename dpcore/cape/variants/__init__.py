"""The noise variants, one module each (its mathematics and its ``ENTRIES``), collected by
:mod:`dpcore.cape.noise_variants`: ``helper`` (a trusted helper draws the e_s) and ``secure_sum`` (the helper-free
variant: the sites draw them and compute their sum by a secure sum)."""
