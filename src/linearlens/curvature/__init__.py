"""Curvature matrices (Fisher, empirical Fisher, L² metric) in NNGeometry-style representations."""

from .fisher import REPRESENTATIONS, build, fisher, in_eigenbasis, refit_kfe_diagonal
from .layout import AffineForm, ParameterLayout
from .optim import KroneckerFactoredOptimizer
from .representations import (
           BlockDiagonal,
           CurvatureMatrix,
           Dense,
           Diagonal,
           EigenKronecker,
           Kronecker,
           LowRank,
           QuasiDiagonal,
)
from .sources import FisherSource

__all__ = ["REPRESENTATIONS", "AffineForm", "BlockDiagonal", "CurvatureMatrix", "Dense", "Diagonal",
           "EigenKronecker", "FisherSource", "Kronecker", "KroneckerFactoredOptimizer", "LowRank",
           "ParameterLayout", "QuasiDiagonal", "build", "fisher", "in_eigenbasis", "refit_kfe_diagonal"]
