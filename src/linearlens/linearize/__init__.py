"""Linearised views of a network during training: the telescoping model and the model
linearised at initialisation (``telescoping``), the label smoother and effective parameters
(``smoother``), iterative linearisation (``iterative``) and damped Gauss-Newton
(``gauss_newton``), on a flat-parameter functional view of the network (``functional``).

Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
