"""Pydantic's validation errors as one line each, naming the config key as ``--set`` spells it.

This is the one translator of validation errors, below the layers whose classes it
describes: :mod:`sparkanon.config.messages` hands it the unions of a job config,
:mod:`sparkanon.models` the union of the privacy models. A line names the key
(``attributes.1.order``), says what is wrong and, where it helps, the value given and
the fix (the variants of a union, the parameter's owner of an unknown key).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class UnionSection:
    """A section of the config that is a union told apart by one key.

    Attributes:
        selector: the key that selects a variant (``kind``, ``name``).
        variants: the variants by their selector value, each with its pydantic class;
            a function, so a registry filled after import is read when an error is
            described.
    """

    selector: str
    variants: Callable[[], Mapping[str, type[BaseModel]]]


Unions = Mapping[str, UnionSection]
"""The union sections of a config by their top-level key (``attributes``, ``model``...)."""


def error_lines(
    errors: Iterable[Mapping[str, Any]], unions: Unions, single_model: bool = False
) -> list[str]:
    """One line per pydantic error of a config.

    Args:
        errors: ``ValidationError.errors()``.
        unions: the config's union sections (their variant tags are not keys).
        single_model: the raw config gave ``model`` as one mapping (not a list), so its
            keys are ``model.k``, not ``model.0.k``.

    Returns:
        The lines, in the errors' order.
    """
    return [_describe_error(err, unions, single_model) for err in errors]


def _location(loc: tuple[Any, ...], unions: Unions, single_model: bool) -> str:
    """A config key (``attributes.1.order``, as ``--set`` spells it) from a pydantic error location.

    E.g. ``('attributes', 1, 'ordinal', 'order')``.
    The variant tag pydantic inserts after a union's position is dropped: it is not a
    key of the config.
    """
    parts = list(loc)
    if not parts:
        return "(top level)"
    section = parts[0]
    if section == "model" and single_model and len(parts) > 1 and parts[1] == 0:
        del parts[1]
    out = str(parts.pop(0))
    tags = tuple(unions[section].variants()) if section in unions else ()
    for i, part in enumerate(parts):
        if part in tags and (i == 0 or isinstance(parts[i - 1], int) or section == "algorithm"):
            continue
        out += f".{part}"
    return out


_MISSING_HINTS = {
    "order": "its values from lowest to highest, e.g. order: [low, middle, high]",
    "hierarchy": "the path of its ARX hierarchy CSV (one line per value: leaf;parent;...;root)",
    "length": "the number of characters of every code, e.g. length: 5",
}
"""What a variant's required key holds, for the message when it is missing."""


def _variant_keys(union: UnionSection) -> dict[str, frozenset[str]]:
    """The keys each variant of a union section takes (by alias), e.g. ``{"ordinal": {...}}``."""
    return {
        name: frozenset(f.alias or key for key, f in cls.model_fields.items())
        for name, cls in union.variants().items()
    }


def _describe_error(err: Any, unions: Unions, single_model: bool) -> str:
    """One line for one pydantic error: the key, what is wrong and, where useful, the value."""
    loc = _location(err["loc"], unions, single_model)
    msg = err["msg"].removeprefix("Value error, ")
    kind = err["type"]
    raw_loc = err["loc"]
    section = raw_loc[0] if raw_loc else None
    # The variant a union item was validated as: ("attributes", 1, "ordinal", "order").
    in_variant = (
        section in ("attributes", "model") and len(raw_loc) > 2 and isinstance(raw_loc[1], int)
    )
    tag = raw_loc[2] if in_variant else None
    item_key = _location(raw_loc[:3], unions, single_model) if in_variant else loc  # attributes.1
    bad = err.get("input")
    column = ""
    if section == "attributes" and isinstance(bad, Mapping) and isinstance(bad.get("name"), str):
        column = f" (column {bad['name']!r})"
    if kind == "value_error":
        if not raw_loc:  # the cross-section checks name their keys themselves
            return "\n  ".join(msg.split("\n"))
        assigned = re.match(r"([A-Za-z_]\w*) = ", msg)
        if assigned:  # "p = 5 > k = 4: ..." -> model.p = 5 > k = 4: ...
            return f"{loc}.{msg}{column}"
        head, sep, rest = msg.partition(": ")
        # "order: repeated values" -> attributes.1.order; "builder.bounds: ..." too
        if sep and all(part.isidentifier() for part in head.split(".")):
            loc, msg = f"{loc}.{head}", rest
        return f"{loc}: {msg}{column}"
    if kind == "extra_forbidden" and section == "algorithm" and len(raw_loc) > 2:
        param = raw_loc[-1]
        owners = [n for n, keys in _variant_keys(unions["algorithm"]).items() if param in keys]
        where = f" (a parameter of {', '.join(owners)})" if owners else ""
        return f"{loc}: algorithm {raw_loc[1]!r} takes no {param!r}{where}; remove it"
    if kind == "extra_forbidden" and in_variant and len(raw_loc) == 4:
        param = raw_loc[-1]
        owners = [
            n for n, keys in _variant_keys(unions[section]).items() if param in keys and n != tag
        ]
        if owners:
            selector = unions[section].selector
            what = f"a {tag} attribute" if section == "attributes" else f"model {tag!r}"
            of = (
                f"a key of {', '.join(owners)} attributes"
                if section == "attributes"
                else f"a parameter of {', '.join(owners)}"
            )
            return (
                f"{loc}: unknown key: {what} takes no {param!r} ({of}); remove it or change "
                f"{item_key}.{selector} (got {bad!r})"
            )
    if kind == "extra_forbidden":
        msg = "unknown key (check the spelling; see docs/configuration.md)"
    elif kind == "missing":
        msg = "required key is missing"
        param = raw_loc[-1] if raw_loc else None
        if section == "attributes" and in_variant and param in _MISSING_HINTS:
            article = "an" if str(tag)[0] in "aeiou" else "a"
            name = f" {bad['name']!r}" if column else ""
            hint = _MISSING_HINTS[str(param)]
            return f"{loc}: {msg}; {article} {tag} attribute{name} needs {param}: {hint}"
        return f"{loc}: {msg}{column}"
    elif kind == "int_type":
        msg = "expected an integer such as 8 (true/false, quoted or decimal numbers are not)"
    elif kind == "float_type":
        msg = "expected a number such as 0.5 (true/false and quoted numbers are not)"
    elif kind in ("union_tag_invalid", "union_tag_not_found") and section in unions:
        key, variants = unions[section].selector, tuple(unions[section].variants())
        tag = err.get("ctx", {}).get("tag")
        what = f"unknown {key} {tag!r}" if tag is not None else f"no {key} given"
        return f"{loc}.{key}: {what}; use one of {', '.join(variants)}"
    shown = "" if kind == "missing" else f" (got {bad!r})"
    return f"{loc}: {msg}{shown}"
