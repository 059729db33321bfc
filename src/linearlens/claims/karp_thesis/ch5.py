"""Chapter 5 and Appendix C, landscape-aware growing of language models: the claims of Figs 5.2-5.4
and Tables 5.1, 5.2, C.1, C.2 (Fig 5.1 is a drawing, in figures.karp_thesis.ch5). Filled by
issue 29."""
