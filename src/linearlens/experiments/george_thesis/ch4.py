"""Experiments for Chapter 4 (EKFAC) and appendix A. The runs behind Fig 4.2 (gradient correlations in the KFE;
KFAC vs EKFAC error against the exact Fisher), Figs 4.3-4.6 and A.1-A.5 (training with KFAC and EKFAC:
auto-encoder, VGG11, ResNet34). Issue 26 fills Fig 4.2, issue 27 Figs 4.3-4.6 and A.1-A.5. Fig 4.1 (cartoon
of the rescalings) is a drawing, in the figures module only."""
