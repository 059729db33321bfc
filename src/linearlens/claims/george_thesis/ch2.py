"""Claims for Chapter 2 (background). The thesis's claims about Fig 2.1 (four Gaussians equally far apart in
parameters but not as distributions; analytic). Issue 26 fills it. Fig 2.2 (tangent spaces and learning
paths) is a drawing, in the figures module only."""
