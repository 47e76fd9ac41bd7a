"""Evaluation dicts (schema 1) of each family shape, for the report tests.

The figures are made up but consistent (class sizes sum to the rows); the sub-dicts have
the keys :mod:`sparkanon.risk` and :mod:`sparkanon.evaluation.evaluate` write.
"""

from __future__ import annotations

import copy
from typing import Any

QIS = ["age", "education", "marital-status", "race", "sex"]


def _risk(class_sizes: dict[int, int], uniques_share: float) -> dict[str, Any]:
    rows = sum(f * n for f, n in class_sizes.items())
    return {
        "rows": rows,
        "classes": sum(class_sizes.values()),
        "class_sizes": {str(f): n for f, n in sorted(class_sizes.items())},
        "arx": {
            "prosecutor": {
                "highest": 1.0 / min(class_sizes),
                "average": 0.12,
                "records_at_risk": 0.3,
            },
            "journalist": {"highest": 0.5, "average": 0.05},
            "marketer": {"average": 0.04},
            "sample_uniques": uniques_share,
            "population_uniqueness": {
                "pitman": 0.01,
                "zayatz": 0.012,
                "snb": None,
                "dankar": 0.01,
                "dankar_model": "pitman",
                "reasons": {"snb": "no root"},
            },
        },
        "sdcmicro": {
            "individual": {
                "max": 0.9,
                "mean": 0.02,
                "histogram": {"edges": [0, 0.1, 0.2, 0.5, 1.0], "counts": [900, 60, 30, 10]},
            },
            "global": {"expected_reidentifications": 12.5, "share": 0.0125},
            "share_above_threshold": 0.03,
        },
        "suda2": {
            "max_size": 3,
            "share_with_msu": 0.017,
            "score": {"max": 42.0, "edges": [0, 10, 50], "counts": [10, 7], "zero": 983},
        },
    }


def one_table() -> dict[str, Any]:
    """A k-anonymous one-table release: risk before and after, attacks, utility."""
    ev = {
        "schema": 1,
        "table": {
            "kind": "release",
            "family": "one_table",
            "algorithm": "maa_slie",
            "model": {"name": "hpk", "k": 5, "p": 2},
            "rows": 1000,
            "source": "out/adult_k5",
            "verified": True,
        },
        "view": {
            "quasi_identifiers": QIS,
            "sensitive": "occupation",
            "sampling_fraction": 0.1,
            "threshold": 0.2,
            "known": [["age", "sex"], ["age", "education", "sex"]],
        },
        "risk": {
            "before": _risk({1: 300, 2: 100, 3: 50, 10: 20, 200: 1}, 0.3),
            "after": _risk({5: 60, 6: 50, 10: 10, 100: 1, 200: 1}, 0.0),
        },
        "attacks": {
            "homogeneity": {"share": 0.05, "classes": 3, "records": 15},
            "similarity": {"share": 0.02, "classes": 1},
            "skewness": {
                "max": 0.41,
                "mean": 0.12,
                "histogram": {"edges": [0, 0.1, 0.2, 0.3, 0.5], "counts": [60, 40, 18, 3]},
            },
            "linkage": [
                {
                    "known": ["age", "sex"],
                    "groups": 80,
                    "rows": 1000,
                    "expected_rate": 0.08,
                    "certain_records": 2,
                    "certain_share": 0.002,
                }
            ],
        },
        "anonymeter": None,
        "utility": {
            "distance": {
                "age": {"tvd": 0.03, "emd": 0.01, "bins": 20},
                "education": {"tvd": 0.12, "bins": 16},
                "marital-status": {"tvd": 0.2, "bins": 7},
                "race": {"tvd": 0.05, "bins": 5},
                "sex": {"tvd": 0.0, "bins": 2},
            },
            "family_losses": {"ncp": 0.21, "are": {"mean": 0.1, "queries": 1000}},
            "classification": {
                "target": "salary-class",
                "model": "naive_bayes",
                "accuracy_original": 0.83,
                "accuracy_release": 0.79,
                "majority": 0.76,
                "test_rows": 500,
            },
        },
        "family": {"name": "one_table", "reconstruction": None, "covariance": None},
        "attacks_run": [
            {
                "attack": "rank correlation of integer columns with the published order (data)",
                "outcome": "largest is 'age': 0.03 over 3,912 distinct sampled rows, within what "
                "a random order gives (limit 0.2 and 5 standard errors)",
                "passed": True,
            },
            {
                "attack": "rank correlation of the published order with the input order (data)",
                "outcome": "not checked: the published rows carry no input position",
                "passed": None,
            },
            {
                "attack": "the run key searched for in every published file",
                "outcome": "not found in 7 files",
                "passed": True,
            },
        ],
        "randomness": {"key": "drawn for this run and not kept"},
        "warnings": ["3 classes of the release are smaller than 10 (counts only shown)"],
    }
    after = ev["risk"]["after"]["sdcmicro"]["individual"]["histogram"]
    after["counts"] = [985, 15, 0, 0]
    return ev


def _numeric_rec(edges: list[float]) -> dict[str, Any]:
    k = len(edges) - 1
    flat = [1.0 / k] * k
    peak = [(i + 1) / sum(range(1, k + 1)) for i in range(k)]
    smooth = [0.5 * a + 0.5 / k for a in peak]
    return {
        "kind": "numeric",
        "noise": {"distribution": "gaussian", "scale": 5.0},
        "x_edges": edges,
        "z_edges": [edges[0] - 10, *edges, edges[-1] + 10],
        "all": {
            "rows": 1000,
            "outside_z_range": 0,
            "noisy": {"method": "noisy", "edges": edges, "probabilities": flat},
            "bayes": {
                "method": "bayes",
                "edges": edges,
                "probabilities": smooth,
                "iterations": 40,
                "stopped_by": "chi_square",
            },
            "em": {
                "method": "em",
                "edges": edges,
                "probabilities": peak,
                "iterations": 120,
                "stopped_by": "likelihood_gain_below_tolerance",
            },
        },
    }


def _categorical_rec(values: list[str]) -> dict[str, Any]:
    k = len(values)
    p = [1.0 / k] * k
    return {
        "kind": "categorical",
        "noise": {
            "distribution": "randomized_response",
            "p": 0.7,
            "values": values,
            "transition_matrix": [[0.7, 0.3], [0.3, 0.7]],
        },
        "values": values,
        "all": {
            "rows": 1000,
            "values": values,
            "noisy": {"method": "noisy", "probabilities": p},
            "categorical_ibu": {
                "method": "categorical_ibu",
                "probabilities": p,
                "iterations": 9,
                "stopped_by": "change_below_tolerance",
                "values": values,
            },
            "categorical_inversion": {
                "method": "categorical_inversion",
                "probabilities": p,
                "iterations": 0,
                "stopped_by": "closed_form",
            },
        },
    }


def perturbed() -> dict[str, Any]:
    """A perturbed release with its reconstruction (the shape of reconstruction.json)."""
    ev = one_table()
    ev["table"] |= {
        "family": "perturbation",
        "row_level": True,
        "algorithm": "additive_noise",
        "model": None,
    }
    ev["risk"]["after"] = _risk({1: 1000}, 1.0)
    ev["anonymeter"] = {
        attack: {
            "main": {"rate": 0.2, "ci": [0.15, 0.25], "successes": 100},
            "control": {"rate": 0.1, "ci": [0.07, 0.13], "successes": 50},
            "baseline": {"rate": 0.05, "ci": [0.03, 0.07], "successes": 25},
            "risk": {"value": risk, "ci": [0.0, 2 * risk]},
            "n_attacks": 500,
        }
        for attack, risk in (
            ("singling_out_univariate", 0.01),
            ("singling_out_multivariate", 0.015),
            ("linkability", 0.02),
            ("inference", 0.1),
        )
    }
    ev["family"] = {
        "name": "perturbation",
        "reconstruction": {
            "release": "out/adult_noise",
            "rows": 1000,
            "by": "salary-class",
            "labels": {"<=50K": 760, ">50K": 240},
            "bins": 10,
            "integer_bins": False,
            "columns": {
                "age": _numeric_rec([17 + 7.3 * i for i in range(11)]),
                "sex": _categorical_rec(["Female", "Male"]),
            },
        },
        "covariance": None,
    }
    ev["warnings"] = []
    return ev


def synthetic() -> dict[str, Any]:
    """A condensed (synthetic) release with its covariance matrices."""
    ev = perturbed()
    ev["table"] |= {"family": "synthesis", "algorithm": "condensation"}
    ev["family"] = {
        "name": "synthesis",
        "reconstruction": None,
        "covariance": {
            "columns": ["age", "education-num", "hours-per-week"],
            "original": [[180.0, 3.2, 20.1], [3.2, 6.5, 2.1], [20.1, 2.1, 150.0]],
            "synthetic": [[170.0, 2.9, 18.0], [2.9, 6.1, 1.5], [18.0, 1.5, 140.0]],
        },
    }
    return ev


def raw_input() -> dict[str, Any]:
    """A raw input: risk only (no before, no utility, no family figures)."""
    return {
        "schema": 1,
        "table": {
            "kind": "input",
            "family": None,
            "algorithm": None,
            "model": None,
            "rows": 650,
            "source": "data/adult.csv",
        },
        "view": {
            "quasi_identifiers": QIS,
            "sensitive": None,
            "sampling_fraction": 0.01,
            "threshold": 0.1,
            "known": [],
        },
        "risk": {"before": None, "after": _risk({1: 300, 2: 100, 3: 50}, 0.46)},
        "attacks": {},
        "anonymeter": None,
        "utility": {"distance": {}, "family_losses": {}, "classification": None},
        "family": {"name": None, "reconstruction": None, "covariance": None},
        "warnings": [],
    }


def not_computed() -> dict[str, Any]:
    """A one-table release with measures not computed, zero attacks and large counts.

    Carries the top-level ``not_computed`` list, a skipped skewness attack, a homogeneity
    attack that found nothing (``records: 0, classes: 0, share: 0``), a fractional expected
    count of re-identifications above 10,000 and shares below 0.01%.
    """
    ev = one_table()
    ev["not_computed"] = [
        {"measure": "attacks.skewness", "reason": "the sensitive attribute has one value"},
        {"measure": "risk.after.suda2", "reason": "SUDA2 is off in the config"},
    ]
    ev["attacks"]["skewness"] = None
    ev["attacks"]["homogeneity"] = {"records": 0, "classes": 0, "share": 0.0, "class_share": 0.0}
    after = ev["risk"]["after"]
    after["suda2"] = None
    after["sdcmicro"]["global"] = {"expected_reidentifications": 14670.3, "share": 0.0000321}
    after["sdcmicro"]["individual"]["mean"] = 0.0000321
    after["arx"]["population_uniqueness"]["estimated_uniques"] = {"dankar": 12345.678}
    ev["utility"]["family_losses"] = {
        "DM": 1651158.0,
        "R_IL": 0.09,
        "NCP_by_attribute": {"age": 5.86, "sex": 0.46},
        "unlabelled_loss": 0.5,
    }
    return ev


SHAPES = {
    "one_table": one_table,
    "not_computed": not_computed,
    "perturbed": perturbed,
    "synthetic": synthetic,
    "raw_input": raw_input,
}


def deep_copy(ev: dict[str, Any]) -> dict[str, Any]:
    """A copy the test may change."""
    return copy.deepcopy(ev)
