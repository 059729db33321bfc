"""Curvature matrices (Fisher, empirical Fisher, L² metric) in NNGeometry-style representations."""

from ..parameters import ParameterLayout
from .fisher import CONV_FACTORS, REPRESENTATIONS, build, fisher, in_eigenbasis, refit_kfe_diagonal
from .input_factors import DenseInputFactor, InputFactor, PerPositionFactor
from .layout import AffineForm
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

__all__ = ["CONV_FACTORS", "REPRESENTATIONS", "AffineForm", "BlockDiagonal", "CurvatureMatrix", "Dense",
           "DenseInputFactor", "Diagonal", "EigenKronecker", "FisherSource", "InputFactor", "Kronecker",
           "KroneckerFactoredOptimizer", "LowRank", "ParameterLayout", "PerPositionFactor", "QuasiDiagonal",
           "build", "fisher", "in_eigenbasis", "refit_kfe_diagonal"]
