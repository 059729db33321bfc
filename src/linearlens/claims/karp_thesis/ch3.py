"""Chapter 3 and Appendix B, local signal adaptivity (a CNN against its tangent kernel): the claims
of Figs 3.2-3.5 and Tables 3.1, B.1 (Fig 3.1 is photographs, listed only). Filled by issue 28."""
