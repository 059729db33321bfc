"""Speed benchmarks of the library's fast paths against the routes they replace, each case
measured in a fresh process so that peak memory is its own."""
