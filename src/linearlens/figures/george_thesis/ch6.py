"""Figures for Chapter 6 (NTK alignment) and appendix B. The plots of Figs 6.1-6.6 and B.1-B.8 (tangent-kernel
spectrum, alignment with the labels, SuperNat, complexity measures); Fig 6.5's left half is an algorithm
box, drawn with its curves. Issue 23 fills it."""
