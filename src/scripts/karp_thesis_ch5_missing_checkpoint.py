"""Rule karp_thesis_ch5_missing_checkpoint: runs only when a growing setting names a checkpoint that
is not there, and says what is missing and how to supply it (it writes nothing)."""

from linearlens.workflow import logged_job

with logged_job(snakemake) as log:
    raise FileNotFoundError(
        f"{snakemake.output[0]} does not exist: growing setting(s) {snakemake.params.settings} of "
        "karp_thesis.ch5 grow this checkpoint. The thesis's own checkpoints (BERT-BASE at step 500,000, the "
        "UL2 decoder at step 300,000, each with its optimiser state) are unreleased. Put a checkpoint written by "
        "linearlens.experiments.karp_thesis.ch5.Trainer.checkpoint (model_spec, state_dict, optimiser_state, "
        "step) at that path, or set the setting's checkpoint to null to pretrain one here for pretrain_steps "
        "(rule karp_thesis_ch5_pretrain).")
