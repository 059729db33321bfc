"""Curvature matrices (Fisher, empirical Fisher, L² metric) in NNGeometry-style representations."""

from .fisher import REPRESENTATIONS, build, fisher, refit_kfe_diagonal
from .layout import AffineForm, ParameterLayout
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
           "EigenKronecker", "FisherSource", "Kronecker", "LowRank", "ParameterLayout", "QuasiDiagonal",
           "build", "fisher", "refit_kfe_diagonal"]
