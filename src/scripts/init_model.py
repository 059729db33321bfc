"""Rule init_model: a seeded, untrained zoo model as a checkpoint."""

from linearlens.models import build_model, save_model
from linearlens.train import seed_everything
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:  # noqa: F821 (snakemake is injected by the script directive)
    settings = snakemake.params.spec  # noqa: F821
    seed_everything(settings["seed"])
    model = build_model(settings["model"])
    save_model(snakemake.output[0], model, settings["model"], seed=settings["seed"], step=0)  # noqa: F821
    log.info("%s: %d parameters", settings["model"]["name"], sum(p.numel() for p in model.parameters()))
