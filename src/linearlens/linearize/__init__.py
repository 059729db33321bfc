"""Linearised views of a network during training: the telescoping model and the model
linearised at initialisation (``telescoping``), the label smoother and effective parameters
(``smoother``), iterative linearisation (``iterative``) and damped Gauss-Newton
(``gauss_newton``), on a flat-parameter functional view of the network (``functional``)."""

from .gauss_newton import damped_gauss_newton_direction, damped_gauss_newton_step
from .iterative import NEVER, LinearisedTraining, NetworkTraining, linearised_outputs, train_iteratively, training_for
from .smoother import (
    Affine, LabelJacobianSmoother, SGDKernelSmoother, Smoother, effective_parameters, smoother_for,
)
from .telescoping import TelescopingTracker

__all__ = ["Affine", "LabelJacobianSmoother", "LinearisedTraining", "NEVER", "NetworkTraining", "SGDKernelSmoother",
           "Smoother", "TelescopingTracker", "damped_gauss_newton_direction", "damped_gauss_newton_step",
           "effective_parameters", "linearised_outputs", "smoother_for", "train_iteratively", "training_for"]
