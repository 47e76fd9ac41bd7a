"""``--set key=value``: overrides applied to the raw config mapping before validation.

:func:`apply_overrides` walks the dotted key into the mapping; :func:`key_types` finds
the types the key may hold from the config's own classes (:mod:`.schema`), and
:func:`override_value` reads the typed text as those types want it (text keys keep the
text as typed, other keys parse it as YAML).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from sparkanon.config.schema import JobConfig
from sparkanon.errors import ConfigError


def apply_overrides(raw: dict[str, Any], overrides: Sequence[str]) -> dict[str, Any]:
    """Apply ``key.sub=value`` overrides to a raw config mapping.

    A value reaching a text key (a name, a path, a separator, a choice such as
    ``output.mode``) is kept exactly as typed: ``sensitive.separator=|``,
    ``attributes.0.name=yes`` and ``input.columns.0=#id`` give the strings ``|``, ``yes``
    and ``#id`` (a value in YAML quotes, ``'"|"'``, is unquoted; ``null`` clears a key that
    may be empty). Any other value is parsed as YAML, so ``model.k=10`` gives an int,
    ``attributes.0.levels.exact=false`` a bool (``1e3`` is the number 1000 on a number key) and
    ``algorithm.psi_weights=[0.3,0.7]`` a list. List items are addressed by index
    (``attributes.0.weight``).

    Args:
        raw: the parsed YAML mapping (not modified).
        overrides: strings ``dotted.key=value``.

    Returns:
        A new mapping with the overrides applied.

    Raises:
        ConfigError: an override is not ``key=value``, its path does not exist, or its
            value is not valid YAML or reads as nothing (``#x``, ``|``) where YAML is parsed.
    """
    result: Any = yaml.safe_load(yaml.safe_dump(raw))
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected key=value, e.g. --set model.k=10")
        key, _, text = item.partition("=")
        key = key.strip()
        parts = key.split(".")
        if any(not part for part in parts):
            raise ConfigError(f"--set {item!r}: empty key or key part; expected e.g. model.k=10")
        node = result
        for depth, part in enumerate(parts[:-1]):
            node = _child(node, part, ".".join(parts[: depth + 1]), create=True)
        last = parts[-1]
        value = override_value(key, text, key_types(parts, result))
        if isinstance(node, list):
            if not last.isdigit() or int(last) >= len(node):
                raise ConfigError(f"--set {key}: {last!r} is not an index of that list")
            node[int(last)] = value
        elif isinstance(node, dict):
            node[last] = value
        else:
            raise ConfigError(f"--set {key}: {'.'.join(parts[:-1])!r} is not a mapping")
    return result


_NULLS = ("", "~", "null", "Null", "NULL")
"""What YAML reads as no value."""

_YAML12_NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
"""A number as YAML 1.2 spells it (PyYAML, YAML 1.1, reads ``1e3`` as text)."""


def key_types(parts: Sequence[str], raw: Any) -> list[Any]:
    """The types a dotted config key can hold, from the config's own classes.

    A union section (``attributes[]``, ``model``, ``algorithm``, ``sensitive``) is
    narrowed to the variants whose tag (``kind``, ``name``) the raw mapping names.

    Args:
        parts: the key, split at dots (``["sensitive", "separator"]``).
        raw: the raw config mapping the key is looked up in.

    Returns:
        Every type the key may take (``str``, ``Literal['a', 'b']``, ``int``, ``NoneType``...),
        empty when the key is not one of the config's keys.
    """
    return _reachable(JobConfig, list(parts), raw)


def _reachable(annotation: Any, parts: list[str], node: Any) -> list[Any]:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _reachable(get_args(annotation)[0], parts, node)
    if origin in (Union, UnionType):
        members = list(get_args(annotation))
        if isinstance(node, Mapping):
            members = [m for m in members if _tags_match(m, node)] or members
        return [t for m in members for t in _reachable(m, parts, node)]
    if not parts:
        return [annotation]
    part, rest = parts[0], parts[1:]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        for name, field in annotation.model_fields.items():
            if part in (name, field.alias):
                child = node.get(part) if isinstance(node, Mapping) else None
                return _reachable(field.annotation, rest, child)
        return []
    args = get_args(annotation)
    if origin in (tuple, list) and args:
        if not part.isdigit():  # a one-model mapping stands for a list of one
            return _reachable(args[0], parts, node)
        index = int(part)
        item = args[0] if origin is list or args[-1] is Ellipsis else None
        if item is None and index < len(args):
            item = args[index]
        child = node[index] if isinstance(node, list) and index < len(node) else None
        return [] if item is None else _reachable(item, rest, child)
    if origin in (dict, Mapping) and len(args) == 2:
        child = node.get(part) if isinstance(node, Mapping) else None
        return _reachable(args[1], rest, child)
    return []


def _tags_match(member: Any, node: Mapping[str, Any]) -> bool:
    """Whether a union member's literal tags (``kind``, ``name``) agree with the raw mapping."""
    while get_origin(member) is Annotated:
        member = get_args(member)[0]
    if not (isinstance(member, type) and issubclass(member, BaseModel)):
        return True
    for name, field in member.model_fields.items():
        if get_origin(field.annotation) is Literal and name in node:
            if node[name] not in get_args(field.annotation):
                return False
    return True


def _plain(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _is_text(annotation: Any) -> bool:
    annotation = _plain(annotation)
    if get_origin(annotation) is Literal:
        return all(isinstance(a, str) for a in get_args(annotation))
    return annotation is str


def _is_number(annotation: Any) -> bool:
    return _plain(annotation) in (int, float)


def override_value(key: str, text: str, types: Sequence[Any]) -> Any:
    """The value of ``--set key=text`` for a key of these types (:func:`key_types`).

    Raises:
        ConfigError: the text is parsed as YAML and is not valid YAML, or reads as no
            value although something was typed (``#x`` is a comment, ``|`` a block marker).
    """
    kinds = [t for t in types if _plain(t) is not type(None)]
    nullable = len(kinds) < len(types)
    if kinds and all(_is_text(t) for t in kinds):
        stripped = text.strip()
        if nullable and stripped in _NULLS:
            return None
        if len(stripped) >= 2 and stripped[0] == stripped[-1] and stripped[0] in "'\"":
            try:
                quoted = yaml.safe_load(stripped)
            except yaml.YAMLError:
                quoted = None
            if isinstance(quoted, str):
                return quoted
        return text
    quote_it = f"""; to give the text itself, quote it: --set '{key}="{text.strip()}"'"""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ConfigError(
            f"--set {key}: value {text!r} is not valid YAML; close brackets" + quote_it
        ) from None
    if value in (None, "") and text.strip() not in _NULLS:
        raise ConfigError(
            f"--set {key}: value {text!r} reads as YAML as no value (# starts a comment, | and > "
            "a block)" + quote_it
        )
    if (
        isinstance(value, str)
        and kinds
        and all(_is_number(t) for t in kinds)
        and _YAML12_NUMBER.match(value.strip())
    ):
        return float(value)
    return value


def _child(node: Any, part: str, path: str, create: bool) -> Any:
    if isinstance(node, dict):
        if part not in node:
            if not create:
                raise ConfigError(f"--set {path}: no such key")
            node[part] = {}
        return node[part]
    if isinstance(node, list) and part.isdigit() and int(part) < len(node):
        return node[int(part)]
    raise ConfigError(f"--set {path}: cannot descend into {part!r}")
