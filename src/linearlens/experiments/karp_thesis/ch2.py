"""Chapter 2 and Appendix A, the algorithmic stability of SGD: the runs behind Figs 2.1-2.4,
A.1-A.15 and Table 2.1 (a configuration table). Filled by issue 25."""
