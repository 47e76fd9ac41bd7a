"""Privacy models that check published equivalence-class summaries."""

from sparkanon.models.base import HPKAnonymity, model_from_config

__all__ = ["HPKAnonymity", "model_from_config"]
