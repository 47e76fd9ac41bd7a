"""Attribute kinds, taxonomy trees and the encoded schema (seed 000, section 1.5)."""
