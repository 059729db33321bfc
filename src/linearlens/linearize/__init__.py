"""Linearised views of a network during training: the telescoping model and the model
linearised at initialisation (``telescoping``), the label smoother and effective parameters
(``smoother``), on a flat-parameter functional view of the network (``functional``)."""

from .smoother import (
    Affine, LabelJacobianSmoother, SGDKernelSmoother, Smoother, effective_parameters, smoother_for,
)
from .telescoping import TelescopingTracker

__all__ = ["Affine", "LabelJacobianSmoother", "SGDKernelSmoother", "Smoother", "TelescopingTracker",
           "effective_parameters", "smoother_for"]
