"""Metrics: sensitive entropies, PSI, EPP, R_IL (seed 000) and AVG-IL, AVG-Ent, CAVG (seed 003)."""
