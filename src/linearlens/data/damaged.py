"""Files on disk that cannot be read as their format: cut off, corrupt, or something else under the
right name. The error is one line naming the file, what is wrong, and the command that makes the
file again. Standard library only: the workflow, the data readers and the training code all raise it.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

from ..errors import ExplainedFailure


class DamagedFileError(ExplainedFailure, ValueError):
    """A file of the pipeline is cut off, corrupt or not of its format. Raw downloads, prepared
    datasets and checkpoints are rules' outputs: deleting one and asking Snakemake for it by path
    makes it anew."""


def rebuild_command(path: str | Path) -> str:
    # Snakemake rebuilds a missing output when asked for it by path; `--forcerun <path>` would also
    # rerun everything downstream of the file in the default target.
    return f"snakemake --cores 1 {path}"


def damaged_artefact(path: str | Path, problem: str) -> DamagedFileError:
    """The error for an intermediate result the workflow wrote and can write again."""
    return DamagedFileError(
        f"{path} is damaged ({problem}): delete it and rebuild it with `{rebuild_command(path)}`"
    )


def zip_damage(path: str | Path) -> str | None:
    """What is wrong with a zip archive (``.npz``, a torch.save checkpoint), or None if every member
    reads back with its CRC. Reads the whole archive, so it is called only after a load failed."""
    try:
        with zipfile.ZipFile(path) as archive:
            bad_member = archive.testzip()
    except (zipfile.BadZipFile, zlib.error, EOFError) as error:
        return f"not a complete zip archive: {error}"
    if bad_member is not None:
        return f"zip member {bad_member} fails its CRC check"
    return None
