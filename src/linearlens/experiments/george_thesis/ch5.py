"""Experiments for Chapter 5 (lazy vs hasty) and appendix C. The runs behind Figs 5.1-5.4 and C.1-C.9
(linearised vs non-linear training on easy and difficult examples; the quadratic model). Issue 24 fills it."""
