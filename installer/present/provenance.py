"""The words for where a training size came from: what was done in this run, never more.

A size carried from the installed release was not measured by this run, whoever chose it
first; "measured by the installer" is said only of a size read from the nodes now.
"""

from __future__ import annotations

from installer.decide.model import Provenance, Resolution, Source

_WHO = {
    Provenance.INSTALLER: "chosen by the installer",
    Provenance.USER: "chosen by a person",
    Provenance.UNKNOWN: "who chose it is unknown",
}


def training_words(training: Resolution) -> str:
    """`cpu=5,memory=20Gi (<these words>; <provenance>)` in the install summary."""
    if training.source is Source.CARRIED:
        return f"carried from the installed release, {_WHO[training.provenance]}"
    if training.source is Source.OVERRIDE:
        return "chosen by a person"
    if training.source is Source.FALLBACK:
        return "the installer's default: no node could be measured"
    if training.provenance is Provenance.INSTALLER:
        return "measured by the installer"
    return _WHO[training.provenance]
