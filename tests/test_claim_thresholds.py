"""The claim thresholds a scale configures build each claims module's *Thresholds class, and the
schema names exactly the class's fields, so a threshold leads by its name from config to code."""

import dataclasses

import pytest

from configured import claim_thresholds
from linearlens.claims.george_thesis.ch2 import GaussianThresholds
from linearlens.claims.george_thesis.ch3 import FisherQualityThresholds
from linearlens.claims.george_thesis.ch4 import AutoencoderThresholds, CifarThresholds, KfeTrackingThresholds
from linearlens.claims.george_thesis.ch5 import AnalyticThresholds, DifficultyThresholds, SpuriousThresholds
from linearlens.claims.george_thesis.ch5 import ToyThresholds as GeorgeToyThresholds
from linearlens.claims.george_thesis.ch6 import (
    AlignmentThresholds,
    ComplexityThresholds,
    DiskThresholds,
    PerturbationThresholds,
    RbfCapacityThresholds,
    SpectralBiasThresholds,
    SupernatThresholds,
)
from linearlens.claims.iterative_linearisation import Thresholds
from linearlens.claims.karp_thesis.ch2 import StabilityThresholds
from linearlens.claims.karp_thesis.ch3 import LocalSignalThresholds, ToyThresholds
from linearlens.claims.karp_thesis.ch4 import StructureThresholds
from linearlens.claims.karp_thesis.ch5 import GrowingThresholds
from linearlens.config import CONFIG_DIR, load_schema

SCALES = ["smoke", "quick", "paper", "rehearsal"]
# (document, the mapping's name under claim_thresholds or None for the whole, its class)
CONFIGURED = [
    ("iterative_linearisation", None, Thresholds),
    ("karp_thesis", "stability", StabilityThresholds),
    ("karp_thesis", "toy", ToyThresholds),
    ("karp_thesis", "local_signal", LocalSignalThresholds),
    ("karp_thesis", "structure", StructureThresholds),
    ("karp_thesis", "growing", GrowingThresholds),
    ("george_thesis", "gaussian", GaussianThresholds),
    ("george_thesis", "fisher_quality", FisherQualityThresholds),
    ("george_thesis", "kfe_tracking", KfeTrackingThresholds),
    ("george_thesis", "autoencoder", AutoencoderThresholds),
    ("george_thesis", "cifar", CifarThresholds),
    ("george_thesis", "toy", GeorgeToyThresholds),
    ("george_thesis", "analytic", AnalyticThresholds),
    ("george_thesis", "difficulty", DifficultyThresholds),
    ("george_thesis", "spurious", SpuriousThresholds),
    ("george_thesis", "spectral_bias", SpectralBiasThresholds),
    ("george_thesis", "supernat", SupernatThresholds),
    ("george_thesis", "rbf_capacity", RbfCapacityThresholds),
    ("george_thesis", "perturbation", PerturbationThresholds),
    ("george_thesis", "alignment", AlignmentThresholds),
    ("george_thesis", "disk", DiskThresholds),
    ("george_thesis", "complexity", ComplexityThresholds),
]


def _schema(document: str, name: str | None) -> dict:
    schema = load_schema(CONFIG_DIR / "schema" / f"{document}.schema.yaml")["properties"]["claim_thresholds"]
    return schema if name is None else schema["properties"][name]


def _configured_fields(kind) -> set[str]:
    """The fields a scale must set: those without a default in code."""
    return {field.name for field in dataclasses.fields(kind) if field.default is dataclasses.MISSING}


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("document, name, kind", CONFIGURED)
def test_each_scale_builds_the_thresholds(scale, document, name, kind):
    settings = claim_thresholds(document, scale, name)
    assert set(settings) == _configured_fields(kind)
    kind(**settings)


@pytest.mark.parametrize("document, name, kind", CONFIGURED)
def test_the_schema_names_the_fields_each_with_a_description(document, name, kind):
    schema = _schema(document, name)
    assert set(schema["properties"]) == set(schema["required"]) == _configured_fields(kind)
    assert schema["additionalProperties"] is False
    assert all(spec.get("description") for spec in schema["properties"].values())
