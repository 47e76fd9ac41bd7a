"""Attribute kinds, taxonomy trees and the encoded schema (Shi et al. 2024, section 1.5)."""
