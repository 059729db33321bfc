"""Named data sources, their loaders in the real file formats, transforms and prepared datasets.

Import from the modules: this file stays empty so that a job's code inputs hold only what it uses."""
