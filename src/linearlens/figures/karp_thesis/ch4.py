"""Chapter 4, a one-layer transformer learning decision lists: the plots of Fig 4.1. Filled by
issue 28."""
