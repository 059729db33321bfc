"""Chapter 4, a one-layer transformer learning decision lists: the claims of Fig 4.1. Filled by
issue 28."""
