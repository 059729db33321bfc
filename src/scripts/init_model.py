"""Rule init_model: a seeded, untrained zoo model as a checkpoint."""

from linearlens.models.zoo import build_model, save_model
from linearlens.train.runtime import seed_everything
from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    settings = snakemake.params.spec
    seed_everything(settings["seed"])
    model = build_model(settings["model"])
    save_model(snakemake.output[0], model, settings["model"], seed=settings["seed"], step=0)
    log.info("%s: %d parameters", settings["model"]["name"], sum(p.numel() for p in model.parameters()))
