"""Torch-free analysis (pandas and numpy only) shared by figures and claims: one module per paper, one package per thesis with one module per chapter."""
