"""Growing a trained network in depth (Karp ch. 5): ``operators`` names and orders the layers of a
growth (torch-free, for the workflow and the figures); ``apply`` grows a model and carries its
optimiser's state. Import from the modules: this file stays empty so that a job's code inputs hold
only what it uses."""
