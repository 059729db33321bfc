"""Rule george_thesis_ch6_run_rbf_capacity: minimum-norm interpolators on random RBF features, their test
error and the A = Id and optimised-A Rademacher bounds over the anisotropy c (Fig B.3)."""

import numpy as np
from threadpoolctl import threadpool_limits

from linearlens.capacity.rbf_features import rbf_capacity_experiment
from linearlens.workflow import logged_job

with logged_job(snakemake) as log, threadpool_limits(limits=snakemake.threads):
    spec = snakemake.params.spec
    record = rbf_capacity_experiment(spec)
    np.savez_compressed(snakemake.output[0], **record)
    log.info("N = %d, P = %d, %d subsamples of %d, %d values of c: test error %.3f -> %.3f, A = Id bound %.3g -> %.3g, "
             "optimised bound %.3g -> %.3g (c = 0 -> 1, subsample means)", spec["n_points"], spec["n_features"],
             spec["n_subsamples"], spec["n_train"], len(record["c_grid"]), *(
                 value for key in ("test_error", "bound_identity", "bound_optimised")
                 for value in record[key].mean(axis=0)[[0, -1]]))
