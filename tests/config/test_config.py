"""Config validation and ``--set`` overrides: pure, no data is read.

Every invalid config must raise :class:`ConfigError` (exit code 2) with a
message naming the key and, where there is one, the bad value.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from sparkanon.algorithms import ALGORITHMS
from sparkanon.config import JobConfig, apply_overrides
from sparkanon.errors import EXIT_USER, ConfigError
from sparkanon.families import load_config, parse_config
from sparkanon.models import HPKAnonymity, KAnonymity, ModelSet, PSensitiveKAnonymity
from tests._adult import ROOT, adult_config
from tests._inputs import attribute, demo_config, make_config, write_config

FD_K_CONF = ROOT / "conf" / "adult_fd_k.yaml"


@pytest.fixture
def raw(tmp_path: Path) -> dict[str, Any]:
    """A valid raw config (the demo one with small-input defaults)."""
    return make_config(tmp_path, tmp_path / "input.csv")


def _error(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(raw, source="job.yaml")
    assert info.value.exit_code == EXIT_USER
    return str(info.value)


# ---------------------------------------------------------------- valid configs


def test_demo_config_is_valid() -> None:
    cfg = parse_config(demo_config(), source="conf/adult_hpk.yaml")
    assert isinstance(cfg, JobConfig)
    assert cfg.model == (HPKAnonymity(h=2, p=4, k=8),)
    assert isinstance(cfg.models, ModelSet)
    assert cfg.models.min_class_size() == 8
    assert [a.name for a in cfg.quasi_identifiers] == [
        "age",
        "education",
        "marital-status",
        "native-country",
        "workclass",
        "sex",
        "race",
    ]
    assert cfg.kept_columns == ("income",)


def test_small_config_is_valid_and_frozen(raw: dict[str, Any]) -> None:
    cfg = parse_config(raw)
    model = cfg.model[0]
    assert (model.h, model.p, model.k) == (2, 2, 4)
    assert cfg.output.mode == "error"
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen-instance error
        model.k = 3  # type: ignore[misc]


def test_defaults_fill_optional_sections(raw: dict[str, Any]) -> None:
    for section in ("algorithm", "partitioning", "seed"):
        raw.pop(section)
    cfg = parse_config(raw)
    assert cfg.algorithm.name == "maa_slie"
    assert cfg.algorithm.psi_weights == (0.5, 0.5)
    assert cfg.partitioning.max_block_rows == 2000
    assert cfg.seed == 0


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ({"name": "p_sensitive", "k": 4, "p": 3}, PSensitiveKAnonymity(k=4, p=3)),
        ({"name": "k", "k": 5}, KAnonymity(k=5)),
    ],
)
def test_each_model_is_its_own_class(
    raw: dict[str, Any], model: dict[str, Any], expected: Any
) -> None:
    raw["model"] = model
    cfg = parse_config(raw)
    assert cfg.model == (expected,)
    assert cfg.models.min_class_size() == model["k"]


@pytest.mark.parametrize(
    ("model", "param", "owner"),
    [
        ({"name": "p_sensitive", "k": 4, "p": 3, "h": 9}, "h", "hpk"),
        ({"name": "k", "k": 5, "p": 9}, "p", "p_sensitive"),
        ({"name": "k", "k": 5, "h": 9}, "h", "hpk"),
    ],
)
def test_a_model_validates_its_own_parameters(
    raw: dict[str, Any], model: dict[str, Any], param: str, owner: str
) -> None:
    """A parameter of another model is an unknown key, naming the model that takes it."""
    raw["model"] = model
    msg = _error(raw)
    assert f"model.{param}: unknown key" in msg
    assert f"model {model['name']!r} takes no {param!r}" in msg
    assert owner in msg
    assert f"(got {model[param]})" in msg
    assert "model.name" in msg  # the fix: remove it or change the model


def test_model_list_keys_use_the_set_spelling(raw: dict[str, Any]) -> None:
    raw["model"] = [
        {"name": "k", "k": 4, "p": 2},
        {"name": "p_sensitive", "k": 3, "p": 5},
        {"name": "entropy_l", "l": 0.5},
    ]
    lines = _error(raw).splitlines()
    assert any(line.strip().startswith("model.0.p: unknown key") for line in lines)
    assert any(line.strip().startswith("model.1.p = 5 > k = 3") for line in lines)
    assert any(line.strip().startswith("model.2.l:") and "0.5" in line for line in lines)


def test_a_list_of_models_is_a_model_set(raw: dict[str, Any]) -> None:
    raw["model"] = [{"name": "k", "k": 4}, {"name": "entropy_l", "l": 2.5}]
    cfg = parse_config(raw)
    assert [m.name for m in cfg.models] == ["k", "entropy_l"]
    assert cfg.models.min_class_size() == 4


def test_empty_model_list(raw: dict[str, Any]) -> None:
    raw["model"] = []
    msg = _error(raw)
    assert "model: the model list is empty" in msg
    assert "name: k" in msg  # an example of the fix


def test_hpk_needs_sensitive_levels(raw: dict[str, Any]) -> None:
    raw["sensitive"].pop("levels")
    msg = _error(raw)
    assert "model: hpk needs sensitivity levels; add sensitive.levels" in msg
    raw["model"] = {"name": "p_sensitive", "k": 4, "p": 2}
    assert parse_config(raw).sensitive.levels is None


def test_hpk_in_a_list_needs_sensitive_levels(raw: dict[str, Any]) -> None:
    raw["sensitive"].pop("levels")
    raw["model"] = [{"name": "k", "k": 4}, {"name": "hpk", "k": 4, "p": 2, "h": 2}]
    assert "model.1: hpk needs sensitivity levels; add sensitive.levels" in _error(raw)


# ---------------------------------------------------------------- unknown keys


@pytest.mark.parametrize(
    ("mutate", "key", "bad"),
    [
        (lambda c: c.update(modle={"k": 3}), "modle", "modle"),
        (lambda c: c["model"].update(kk=3), "model.kk", "kk"),
        (lambda c: c["input"].update(on_missin="drop"), "input.on_missin", "on_missin"),
        (lambda c: c["attributes"][0].update(wieght=2), "attributes.0.wieght", "wieght"),
        (
            lambda c: c["sensitive"]["levels"][1].update(valeus=["x"]),
            "sensitive.levels.1.valeus",
            "valeus",
        ),
        (lambda c: c["output"].update(overwrite=True), "output.overwrite", "overwrite"),
    ],
)
def test_unknown_key(raw: dict[str, Any], mutate, key: str, bad: str) -> None:
    mutate(raw)
    msg = _error(raw)
    assert key in msg
    assert bad in msg
    assert "unknown key" in msg
    assert "job.yaml" in msg


# ---------------------------------------------------------------- missing keys


@pytest.mark.parametrize(
    ("remove", "key"),
    [
        (lambda c: c["model"].pop("k"), "model.k"),
        (lambda c: c.pop("model"), "model"),
        (lambda c: c.pop("output"), "output"),
        (lambda c: c["output"].pop("path"), "output.path"),
        (lambda c: c["input"].pop("path"), "input.path"),
        (lambda c: c.pop("sensitive"), "sensitive"),
        (lambda c: c["sensitive"].pop("name"), "sensitive.name"),
        (lambda c: c["sensitive"]["levels"][0].pop("weight"), "sensitive.levels.0.weight"),
    ],
)
def test_missing_required_key(raw: dict[str, Any], remove, key: str) -> None:
    remove(raw)
    msg = _error(raw)
    assert f"{key}: required key is missing" in msg


def test_attribute_without_kind(raw: dict[str, Any]) -> None:
    raw["attributes"][2].pop("kind")
    msg = _error(raw)
    assert "attributes.2.kind: no kind given; use one of" in msg
    assert "categorical" in msg and "keep" in msg


# ---------------------------------------------------------------- bad types / values


@pytest.mark.parametrize(
    ("mutate", "key", "bad"),
    [
        (lambda c: c["model"].update(k="eight"), "model.k", "'eight'"),
        (lambda c: c["model"].update(k=2.5), "model.k", "2.5"),
        (lambda c: c["model"].update(k=0), "model.k", "0"),
        (lambda c: c["model"].update(name="l_diversity"), "model.name", "'l_diversity'"),
        (lambda c: c["attributes"][0].update(kind="numeric"), "attributes.0.kind", "'numeric'"),
        (lambda c: c["attributes"][0].update(weight="heavy"), "attributes.0.weight", "'heavy'"),
        (lambda c: c["attributes"][0].update(weight=-1), "attributes.0.weight", "-1"),
        (lambda c: c["algorithm"].update(psi_weights="half"), "algorithm.psi_weights", "'half'"),
        (lambda c: c["algorithm"].update(name="k_member"), "algorithm.name", "'k_member'"),
        (lambda c: c["input"].update(on_missing="ignore"), "input.on_missing", "'ignore'"),
        (lambda c: c["input"].update(format="xlsx"), "input.format", "'xlsx'"),
        (lambda c: c["output"].update(mode="append"), "output.mode", "'append'"),
        (
            lambda c: c["sensitive"]["levels"][0].update(weight=1.5),
            "sensitive.levels.0.weight",
            "1.5",
        ),
        (
            lambda c: c["partitioning"].update(max_block_rows="many"),
            "partitioning.max_block_rows",
            "'many'",
        ),
        (lambda c: c.update(seed="forty-two"), "seed", "'forty-two'"),
        (lambda c: c.update(attributes={"name": "age"}), "attributes", "age"),
    ],
)
def test_bad_type(raw: dict[str, Any], mutate, key: str, bad: str) -> None:
    mutate(raw)
    msg = _error(raw)
    assert f"{key}:" in msg
    assert bad in msg


def test_every_problem_is_reported_on_its_own_line(raw: dict[str, Any]) -> None:
    raw["model"]["k"] = "eight"
    raw["output"]["mode"] = "append"
    raw["input"]["bogus"] = 1
    msg = _error(raw)
    lines = msg.splitlines()
    assert any(line.strip().startswith("model.k:") for line in lines)
    assert any(line.strip().startswith("output.mode:") for line in lines)
    assert any(line.strip().startswith("input.bogus:") for line in lines)


def test_config_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match="must be a YAML mapping"):
        parse_config(["model", "k"], source="job.yaml")  # type: ignore[arg-type]


# ---------------------------------------------------------------- cross-field checks


@pytest.mark.parametrize("weights", [[0.3, 0.3], [0.6, 0.6], [1.5, -0.5], [0.0, 0.9]])
def test_psi_weights_must_sum_to_one(raw: dict[str, Any], weights: list[float]) -> None:
    raw["algorithm"]["psi_weights"] = weights
    msg = _error(raw)
    assert "algorithm.psi_weights" in msg
    assert str(weights) in msg
    assert "w1 + w2 = 1" in msg


@pytest.mark.parametrize("weights", [[0.3, 0.7], [1.0, 0.0], [0.1, 0.9]])
def test_psi_weights_summing_to_one_are_accepted(raw: dict[str, Any], weights: list[float]) -> None:
    raw["algorithm"]["psi_weights"] = weights
    assert parse_config(raw).algorithm.psi_weights == tuple(weights)


def test_psi_weights_need_exactly_two(raw: dict[str, Any]) -> None:
    raw["algorithm"]["psi_weights"] = [0.2, 0.3, 0.5]
    assert "algorithm.psi_weights" in _error(raw)


def test_sensitive_value_in_two_levels(raw: dict[str, Any]) -> None:
    raw["sensitive"]["levels"][1]["values"].append("Sales")
    msg = _error(raw)
    assert "sensitive.levels" in msg
    assert "'Sales'" in msg
    assert "'routine-office'" in msg
    assert "'trades'" in msg


def test_level_names_must_be_unique(raw: dict[str, Any]) -> None:
    raw["sensitive"]["levels"][1]["name"] = "routine-office"
    msg = _error(raw)
    assert "sensitive.levels" in msg
    assert "unique" in msg


@pytest.mark.parametrize(
    ("model", "max_block_rows", "needles"),
    [
        pytest.param(
            {"name": "hpk", "h": 6, "p": 6, "k": 8},
            None,
            ["model.h = 6:", "only 5 levels", "lower h to at most 5"],
            id="h_larger_than_number_of_levels",
        ),
        pytest.param(
            {"name": "hpk", "h": 2, "p": 5, "k": 4},
            None,
            ["model.p = 5 > k = 4:", "lower p or raise k"],
            id="p_larger_than_k",
        ),
        pytest.param(
            {"name": "p_sensitive", "p": 5, "k": 4},
            None,
            ["model.p = 5 > k = 4:", "lower p or raise k"],
            id="p_larger_than_k_for_p_sensitive",
        ),
        pytest.param(
            {"name": "hpk", "h": 3, "p": 2, "k": 4},
            None,
            ["model.h = 3 > p = 2:", "lower h or raise p"],
            id="h_larger_than_p",
        ),
        pytest.param(
            {"name": "hpk", "h": 2, "p": 15, "k": 20},
            None,
            [
                "model.p = 15:",
                "sensitive.levels declares only 14 values",
                "lower p to at most 14",
            ],
            id="p_larger_than_the_listed_sensitive_values",
        ),
        pytest.param(
            None,
            3,
            [
                "partitioning.max_block_rows = 3:",
                "model.k = 4",
                "raise max_block_rows to at least 4",
            ],
            id="max_block_rows_smaller_than_k",
        ),
        pytest.param(
            [{"name": "k", "k": 2}, {"name": "entropy_l", "l": 3.5}],
            3,
            ["partitioning.max_block_rows = 3:", "model.1.l = 3.5", "at least 4"],
            id="max_block_rows_smaller_than_the_largest_class_a_list_needs",
        ),
    ],
)
def test_model_beyond_what_the_data_or_blocks_allow(
    raw: dict[str, Any], model: Any, max_block_rows: int | None, needles: list[str]
) -> None:
    """The error names the key, the limit and the fix."""
    if model is not None:
        raw["model"] = model
    if max_block_rows is not None:
        raw["partitioning"]["max_block_rows"] = max_block_rows
    msg = _error(raw)
    for needle in needles:
        assert needle in msg


def test_h_larger_than_number_of_levels_with_one_level(raw: dict[str, Any]) -> None:
    raw["sensitive"]["levels"] = raw["sensitive"]["levels"][:1]
    msg = _error(raw)  # h=2, p=2: one level of three values
    assert "model.h = 2:" in msg
    assert "only 1 level;" in msg
    assert "lower h to at most 1" in msg


def test_p_larger_than_the_declared_sensitive_values(raw: dict[str, Any]) -> None:
    raw["sensitive"] = {"name": "occupation", "values": ["Sales", "Tech-support", "Adm-clerical"]}
    raw["model"] = [{"name": "k", "k": 5}, {"name": "p_sensitive", "p": 4, "k": 5}]
    msg = _error(raw)
    assert "model.1.p = 4:" in msg
    assert "sensitive.values declares only 3 values" in msg
    assert "lower p to at most 3" in msg


@pytest.mark.parametrize(
    ("name", "edit", "needles"),
    [
        pytest.param(
            "education",
            lambda attr: attr.pop("order"),
            ["attributes.1.order: required key is missing", "'education'", "lowest to highest"],
            id="ordinal_without_order",
        ),
        pytest.param(
            "education",
            lambda attr: attr.update(order=[*attr["order"], "Bachelors"]),
            ["attributes.1.order: repeated values", "'education'"],
            id="ordinal_order_with_repeats",
        ),
        pytest.param(
            "workclass",
            lambda attr: attr.pop("hierarchy"),
            ["attributes.4.hierarchy: required key is missing", "'workclass'", "ARX hierarchy CSV"],
            id="categorical_without_hierarchy",
        ),
    ],
)
def test_attribute_missing_what_its_kind_needs(
    raw: dict[str, Any], name: str, edit: Any, needles: list[str]
) -> None:
    """An ordinal without a valid order, a categorical without a hierarchy: named and explained."""
    edit(attribute(raw, name))
    msg = _error(raw)
    for needle in needles:
        assert needle in msg


@pytest.mark.parametrize(
    ("name", "index", "key", "value", "owner"),
    [
        ("age", 0, "hierarchy", "/tmp/age.csv", "categorical"),
        ("age", 0, "order", ["1", "2"], "ordinal"),
        ("education", 1, "values", ["Bachelors"], "nominal"),
        ("income", 7, "weight", 2.0, "continuous"),
    ],
)
def test_option_on_the_wrong_kind(
    raw: dict[str, Any], name: str, index: int, key: str, value: Any, owner: str
) -> None:
    """A key of another kind is an unknown key at that attribute, naming the kind taking it."""
    attr = attribute(raw, name)
    attr[key] = value
    msg = _error(raw)
    assert f"attributes.{index}.{key}: unknown key" in msg
    assert f"a {attr['kind']} attribute takes no {key!r}" in msg
    assert f"a key of {owner}" in msg
    assert repr(value) in msg
    assert f"change attributes.{index}.kind" in msg


def test_sensitive_column_also_listed_as_attribute(raw: dict[str, Any]) -> None:
    raw["attributes"].append({"name": "occupation", "kind": "keep"})
    msg = _error(raw)
    assert "sensitive.name" in msg
    assert "'occupation'" in msg


def test_duplicate_attribute(raw: dict[str, Any]) -> None:
    raw["attributes"].append({"name": "age", "kind": "keep"})
    msg = _error(raw)
    assert "attributes" in msg
    assert "age" in msg


def test_no_quasi_identifier(raw: dict[str, Any]) -> None:
    raw["attributes"] = [{"name": "income", "kind": "keep"}]
    msg = _error(raw)
    assert "no quasi-identifier" in msg


def test_no_sensitive_levels(raw: dict[str, Any]) -> None:
    raw["sensitive"]["levels"] = []
    assert "sensitive.levels" in _error(raw)


# ---------------------------------------------------------------- load_config


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        pytest.param("nope.yaml", None, "does not exist", id="missing_file"),
        pytest.param("broken.yaml", "model: {k: [1,\n", "not valid YAML", id="invalid_yaml"),
        pytest.param("list.yaml", "- model\n- k\n", "mapping", id="not_a_mapping"),
    ],
)
def test_load_config_unreadable_file(
    tmp_path: Path, name: str, text: str | None, needle: str
) -> None:
    """A file that is absent, not YAML or not a mapping: the error says which and names it."""
    path = tmp_path / name
    if text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=needle) as info:
        load_config(path)
    assert str(path) in str(info.value)


def test_load_config_names_the_file_in_errors(tmp_path: Path, raw: dict[str, Any]) -> None:
    raw["model"]["k"] = "eight"
    path = write_config(tmp_path, raw)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert "model.k" in str(info.value)


@pytest.mark.parametrize("search", ["incognito", "samarati"])
def test_full_domain_has_no_blocks_to_size(tmp_path: Path, search: str) -> None:
    """k above the default max_block_rows is valid for a full-domain search (no blocks)."""
    raw = adult_config(tmp_path, tmp_path / "in.csv", tmp_path / "out", conf=FD_K_CONF)
    raw["model"] = {"name": "k", "k": 2500}
    raw["algorithm"]["name"] = search
    assert "partitioning" not in raw
    cfg = parse_config(raw)
    assert cfg.models.min_class_size() == 2500 > cfg.partitioning.max_block_rows
    # A partitioning section is ignored, not checked, by the full-domain family.
    raw["partitioning"] = {"max_block_rows": 10}
    assert parse_config(raw).algorithm.name == search
    # The same model on a per-block algorithm is still refused.
    raw.pop("partitioning")
    raw["algorithm"] = {"name": "mondrian"}
    raw["output"]["publish"] = "generalized"
    msg = _error(raw)
    assert "partitioning.max_block_rows = 2000:" in msg
    assert "model.k = 2500" in msg


# ---------------------------------------------------------------- --set overrides


def test_override_nested_key_parses_yaml_scalars(raw: dict[str, Any]) -> None:
    before = copy.deepcopy(raw)
    out = apply_overrides(
        raw, ["model.k=10", "output.mode=overwrite", "output.decimals=null", "seed=7"]
    )
    assert out["model"]["k"] == 10
    assert out["output"]["mode"] == "overwrite"
    assert out["output"]["decimals"] is None
    assert out["seed"] == 7
    assert raw == before, "apply_overrides must not modify its input"


def test_override_whole_list_value(raw: dict[str, Any]) -> None:
    out = apply_overrides(raw, ["algorithm.psi_weights=[0.3, 0.7]"])
    assert out["algorithm"]["psi_weights"] == [0.3, 0.7]
    assert parse_config(out).algorithm.psi_weights == (0.3, 0.7)


def test_override_list_indices(raw: dict[str, Any]) -> None:
    raw["algorithm"]["psi_weights"] = [0.5, 0.5]  # the demo config leaves the default
    out = apply_overrides(
        raw,
        [
            "attributes.0.weight=2.5",
            "sensitive.levels.1.weight=0.3",
            "sensitive.levels.4.values=[Protective-serv, Armed-Forces]",
            "algorithm.psi_weights.0=0.25",
            "algorithm.psi_weights.1=0.75",
        ],
    )
    assert out["attributes"][0] == {"name": "age", "kind": "continuous", "weight": 2.5}
    assert out["sensitive"]["levels"][1]["weight"] == 0.3
    assert out["sensitive"]["levels"][4]["values"] == ["Protective-serv", "Armed-Forces"]
    cfg = parse_config(out)
    assert cfg.attributes[0].weight == 2.5
    assert cfg.algorithm.psi_weights == (0.25, 0.75)


def test_override_later_wins_and_strips_key(raw: dict[str, Any]) -> None:
    out = apply_overrides(raw, ["model.k=6", " model.k =9"])
    assert out["model"]["k"] == 9


def test_override_value_may_contain_equals(raw: dict[str, Any]) -> None:
    out = apply_overrides(raw, ["input.options.comment=a=b"])
    assert out["input"]["options"]["comment"] == "a=b"


def test_override_adds_an_optional_key(raw: dict[str, Any]) -> None:
    out = apply_overrides(raw, ["output.decimals=2"])
    assert parse_config(out).output.decimals == 2


def test_override_through_load_config(tmp_path: Path, raw: dict[str, Any]) -> None:
    path = write_config(tmp_path, raw)
    cfg = load_config(path, ["model.k=6", "model.p=3", "attributes.1.weight=2"])
    assert cfg.model == (HPKAnonymity(h=2, p=3, k=6),)
    assert cfg.attributes[1].weight == 2.0


def test_override_result_is_validated(tmp_path: Path, raw: dict[str, Any]) -> None:
    path = write_config(tmp_path, raw)
    with pytest.raises(ConfigError) as info:
        load_config(path, ["model.p=9"])
    assert "model.p = 9 > k = 4" in str(info.value)


@pytest.mark.parametrize(
    ("item", "names"),
    [
        ("attributes.99.weight=2", ["attributes.99", "'99'"]),
        ("attributes.x.weight=2", ["attributes.x", "'x'"]),
        ("algorithm.psi_weights.5=0.1", ["algorithm.psi_weights.5", "'5'"]),
        ("algorithm.psi_weights.first=0.1", ["algorithm.psi_weights.first", "'first'"]),
        ("model.k.x=1", ["model.k.x", "'model.k'"]),
        ("seed.value=1", ["seed.value", "'seed'"]),
    ],
)
def test_override_bad_path(raw: dict[str, Any], item: str, names: list[str]) -> None:
    raw["algorithm"]["psi_weights"] = [0.5, 0.5]  # a list to index into
    with pytest.raises(ConfigError) as info:
        apply_overrides(raw, [item])
    assert info.value.exit_code == EXIT_USER
    msg = str(info.value)
    assert msg.startswith("--set ")
    for name in names:
        assert name in msg


def test_override_unknown_key_is_reported(tmp_path: Path, raw: dict[str, Any]) -> None:
    """A misspelt path never silently passes: it is either refused or rejected by validation."""
    path = write_config(tmp_path, raw)
    for item, name in (("modle.k=3", "modle"), ("model.kk=3", "kk")):
        with pytest.raises(ConfigError) as info:
            load_config(path, [item])
        assert name in str(info.value)


@pytest.mark.parametrize("item", ["model.k", "model.k:10", "", "model.k 10"])
def test_override_malformed_item_without_equals(raw: dict[str, Any], item: str) -> None:
    with pytest.raises(ConfigError) as info:
        apply_overrides(raw, [item])
    msg = str(info.value)
    assert "key=value" in msg
    assert repr(item) in msg


def test_override_malformed_item_empty_key(raw: dict[str, Any]) -> None:
    """``--set =5`` names no key: refuse the item itself, naming it."""
    with pytest.raises(ConfigError) as info:
        apply_overrides(raw, ["=5"])
    assert "=5" in str(info.value)


@pytest.mark.parametrize(
    "item", ["model.k=[1,", "algorithm.psi_weights=[0.3, 0.7", "output={path: x"]
)
def test_override_malformed_yaml_value(raw: dict[str, Any], item: str) -> None:
    """A value that is not valid YAML is a user error (ConfigError naming the key), not a crash."""
    key = item.partition("=")[0]
    with pytest.raises(ConfigError) as info:
        apply_overrides(raw, [item])
    assert key in str(info.value)


# ---------------------------------------------------------------- Chai and Feng 2015 / 003 options


@pytest.mark.parametrize(
    ("edit", "needles"),
    [
        (lambda a: a.update(kind="semantic", length=6, beta=-1.0), ("beta", "-1.0")),
        (
            lambda a: a.update(kind="semantic"),
            ("attributes.0.length: required key is missing", "characters of every code"),
        ),
        (lambda a: a.update(kind="semantic", length=0), ("length", "0")),
        (
            lambda a: a.update(encoding="vector"),
            ("attributes.0.encoding: unknown key", "'vector'", "nominal"),
        ),
        (lambda a: a.update(beta=2.0), ("attributes.0.beta: unknown key", "2.0", "semantic")),
        (lambda a: a.update(kind="nominal", encoding="onehot"), ("encoding", "onehot")),
    ],
    ids=["beta<0", "no-length", "length-0", "encoding-not-nominal", "beta-not-semantic", "enc"],
)
def test_bad_yang2014_attribute_options(raw: dict[str, Any], edit, needles) -> None:
    edit(attribute(raw, "age"))
    msg = _error(raw)
    for needle in needles:
        assert needle in msg, msg


def test_rank_weights_must_match_the_order(raw: dict[str, Any]) -> None:
    edu = attribute(raw, "education")
    edu["rank_weights"] = [1.0] * (len(edu["order"]) - 2)
    msg = _error(raw)
    assert "rank_weights" in msg and "one weight per pair" in msg


def test_l_larger_than_k_for_kl_cluster(raw: dict[str, Any]) -> None:
    raw["algorithm"] = {"name": "kl_cluster"}
    raw["model"] = {"name": "p_sensitive", "k": 3, "p": 4}
    msg = _error(raw)
    assert "model.p = 4 > k = 3" in msg


@pytest.mark.parametrize("algorithm", ["mdav", "maa_sae", "kl_cluster"])
def test_algorithm_that_does_not_guarantee_the_model_is_accepted(
    raw: dict[str, Any], algorithm: str
) -> None:
    """No algorithm/model pairing is refused: the repair step enforces what it does not build."""
    assert "hpk" not in ALGORITHMS[algorithm].implementation.guarantees
    raw["algorithm"] = {"name": algorithm}
    cfg = parse_config(raw)
    assert cfg.algorithm.name == algorithm
    assert [m.name for m in cfg.models] == ["hpk"]


def test_parameter_of_another_algorithm(raw: dict[str, Any]) -> None:
    raw["algorithm"] = {"name": "gpkc", "psi_weights": [0.5, 0.5]}
    msg = _error(raw)
    assert "algorithm.psi_weights: algorithm 'gpkc' takes no 'psi_weights'" in msg
    assert "maa_slie" in msg and "remove it" in msg


def test_unknown_algorithm(raw: dict[str, Any]) -> None:
    raw["algorithm"] = {"name": "mondrian2"}
    msg = _error(raw)
    assert "algorithm.name" in msg and "mondrian2" in msg and "maa_sae" in msg


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda c: c["input"].update(table="db.people"), "input.table: give path (files) or table"),
        (
            lambda c: c["output"].update(table="db.out"),
            "output.table: give path (a directory) or table",
        ),
        (
            lambda c: c["input"].update(path=None, table="db.1people"),
            "input.table: 'db.1people' is not db.name",
        ),
        (
            lambda c: c["input"].update(path=None, table="a.b.c"),
            "input.table: 'a.b.c' is not db.name",
        ),
        (
            lambda c: c["input"].update(partition={"ds": "2026-11-23"}),
            "input.partition: a partition is read from",
        ),
        (
            lambda c: c["output"].update(path=None, table="db.out", format="csv"),
            "output.format: 'csv': catalog tables are written as Parquet",
        ),
    ],
)
def test_tables_in_the_config(raw: dict[str, Any], change, needle: str) -> None:
    change(raw)
    assert needle in _error(raw)


def test_partition_values_are_text_and_the_flag_parses(raw: dict[str, Any]) -> None:
    from sparkanon.config import parse_partition

    raw["input"].update(path=None, table="db.people", partition={"ds": 20261123})
    assert parse_config(raw).input.partition == {"ds": "20261123"}
    assert parse_partition("ds=2026-11-23, region=eu") == {"ds": "2026-11-23", "region": "eu"}
    for bad in ("ds", "ds=", "=x", "ds=1,ds=2"):
        with pytest.raises(ConfigError, match="--partition"):
            parse_partition(bad)


def test_tables_need_the_spark_engine(
    tmp_path: Path, raw: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    from sparkanon.cli import run_command
    from tests._inputs import write_config

    raw["output"].update(path=None, table="db.out")
    assert run_command(str(write_config(tmp_path, raw)), [], engine_name="local") == EXIT_USER
    assert "catalog tables need the Spark engine" in capsys.readouterr().err


# ---------------------------------------------------------------- --set on text keys


def _itemset_raw(raw: dict[str, Any]) -> dict[str, Any]:
    """The small config with a set-valued sensitive attribute (a text ``separator`` key)."""
    raw["sensitive"] = {"name": "occupation", "kind": "itemset", "fanout": 5}
    raw["model"] = {"name": "kl_diversity", "k": 2, "l": 2}
    raw["algorithm"] = {"name": "paa"}
    raw["output"]["publish"] = "anatomy"
    return raw


@pytest.mark.parametrize("typed", ["|", "#x", "*", "yes", "1e3", "no", "null", "~", "[a", "a: b"])
def test_override_of_a_text_key_keeps_the_value_as_typed(raw: dict[str, Any], typed: str) -> None:
    """YAML would read | as '', #x as nothing, * as an alias, yes as true, [a as broken."""
    raw = _itemset_raw(raw)
    cfg = parse_config(apply_overrides(raw, [f"sensitive.separator={typed}"]))
    assert cfg.sensitive.separator == typed
    out = apply_overrides(
        raw,
        [
            f"attributes.0.name={typed}",
            f"input.columns={['c0']}",
            f"input.columns.0={typed}",
            f"input.missing_values.1={typed}",
        ],
    )
    assert out["attributes"][0]["name"] == typed
    assert out["input"]["columns"] == [typed]
    assert out["input"]["missing_values"][1] == typed


def test_override_of_a_text_key_unquotes_and_clears(raw: dict[str, Any]) -> None:
    raw = _itemset_raw(raw)
    out = apply_overrides(
        raw, ["sensitive.separator='|'", 'attributes.1.name="a b"', "output.mode=overwrite"]
    )
    assert out["sensitive"]["separator"] == "|"
    assert out["attributes"][1]["name"] == "a b"
    assert out["output"]["mode"] == "overwrite"
    # A key that may be empty is cleared by null; one that may not keeps the text.
    cleared = apply_overrides(raw, ["output.table=null", "sensitive.taxonomy=~"])
    assert cleared["output"]["table"] is None and cleared["sensitive"]["taxonomy"] is None
    assert apply_overrides(raw, ["sensitive.name=null"])["sensitive"]["name"] == "null"


def test_override_of_number_and_bool_keys_still_parses(raw: dict[str, Any]) -> None:
    out = apply_overrides(
        raw,
        [
            "model.k=5",
            "attributes.0.weight=1e3",
            "output.decimals=2",
            "seed=1E1",
            "algorithm.psi_weights=[0.25, 0.75]",
        ],
    )
    assert out["model"]["k"] == 5
    assert out["attributes"][0]["weight"] == 1000.0
    assert out["seed"] == 10.0  # a float: an integer key then refuses it, naming it
    cfg = parse_config({**out, "seed": 0})
    assert cfg.attributes[0].weight == 1000.0 and cfg.output.decimals == 2
    assert cfg.algorithm.psi_weights == (0.25, 0.75)
    msg = _error(out)
    assert "seed: expected an integer" in msg
    levels = {"widths": [5]}
    raw["attributes"][0]["levels"] = levels
    out = apply_overrides(raw, ["attributes.0.levels.exact=no", "attributes.0.levels.origin=2"])
    assert out["attributes"][0]["levels"]["exact"] is False
    assert out["attributes"][0]["levels"]["origin"] == 2


@pytest.mark.parametrize("typed", ["|", "#x", ">", "*"])
def test_override_of_a_yaml_key_that_reads_as_nothing_says_to_quote(
    raw: dict[str, Any], typed: str
) -> None:
    """Reader options take any YAML value: text YAML reads as nothing is refused, with the fix."""
    with pytest.raises(ConfigError) as info:
        apply_overrides(raw, [f"input.options.sep={typed}"])
    msg = str(info.value)
    assert msg.startswith("--set input.options.sep: value ")
    assert repr(typed) in msg
    assert f"""quote it: --set 'input.options.sep="{typed}"'""" in msg
    out = apply_overrides(raw, ['input.options.sep="' + typed + '"'])
    assert out["input"]["options"]["sep"] == typed
