"""The one failure a training job expects: being asked to stop. Standard library only, so that
the workflow's job wrapper can report it in one line without importing torch."""

from ..errors import ExplainedFailure


class TrainingInterrupted(ExplainedFailure, RuntimeError):
    """The job was asked to stop (SIGTERM, Ctrl-C); its state is saved and a rerun resumes it."""
