r"""The pieces of Spark SQL text sparkanon builds: identifiers and string literals.

Every statement sparkanon sends to Spark (:mod:`sparkanon.engine.catalog`) and every
column name it hands to Spark's parsers (``F.col``, a DDL schema string) is built from
these functions, so a name or a value read from the data or the config cannot change
what a statement does.

**Identifiers** (:func:`quote_identifier`) are always quoted with backticks, a backtick
inside the name written twice (Spark SQL's escape in a quoted identifier; ``F.col`` and
the DDL schema parser read it the same way). Any name is accepted as it is: spaces,
dashes, dots, quotes, backslashes, newlines, unicode, backticks; a warehouse column
``order-id`` or ``first name`` works, and ``a` LOCATION '/tmp/x' --`` stays one name.

**String literals** (:func:`sql_string`) are written between single quotes only when the
value holds neither a single quote nor a backslash. Those two are the only characters
whose meaning in a Spark SQL string literal depends on a parser setting:
``spark.sql.parser.escapedStringLiterals`` false (the default) reads ``\'`` as a quote
and ``\\`` as one backslash, true keeps every backslash as written. A literal without
either reads the same under both settings (and under any other parser setting: newlines,
double quotes, ``--``, ``/*`` and unicode inside single quotes are plain characters). The
statements sparkanon sends need literals only where Spark's grammar takes nothing else
(``LOCATION``, ``TBLPROPERTIES``, a ``PARTITION (...)`` spec: no expression, no ``unhex``,
no parameter marker there), so:

* a location or a partition value holding a quote or a backslash is refused
  (:class:`~sparkanon.errors.ConfigError`, exit 2, naming it), never escaped;
* a table property value, which sparkanon writes itself (JSON of the model, the declared
  noise with its category values, the lock's owner), is first made quote- and
  backslash-free by :func:`encode_property` and read back by :func:`decode_property`.
"""

from __future__ import annotations

import re

from sparkanon.errors import ConfigError

PROPERTY_ESCAPE = "sparkanon-pct:"
"""Prefix of a table property value stored percent-encoded (:func:`encode_property`)."""

_UNSAFE = ("'", "\\")
_ENCODE = {"%": "%25", "'": "%27", "\\": "%5C"}
_DECODE = re.compile("%(25|27|5C)")
_TYPE = re.compile(r"[A-Za-z0-9_<>(),: ]+")


def quote_identifier(name: str) -> str:
    """``name`` as one quoted Spark SQL identifier: in backticks, a backtick doubled.

    >>> quote_identifier("first name")
    '`first name`'
    >>> quote_identifier("a`b")
    '`a``b`'
    """
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str, what: str) -> str:
    """``value`` as a Spark SQL string literal that no parser setting reads otherwise.

    Args:
        value: the text.
        what: what the value is, as the error names it (e.g. ``"the table location"``).

    Raises:
        ConfigError: the value holds a single quote or a backslash (module docstring).
    """
    if any(c in value for c in _UNSAFE):
        raise ConfigError(
            f"{what} {value!r} holds a single quote or a backslash; sparkanon does not write "
            "those into Spark SQL (what they mean there depends on "
            "spark.sql.parser.escapedStringLiterals). Use a value without them"
        )
    return f"'{value}'"


def encode_property(value: str) -> str:
    r"""A table property value as sparkanon stores it: without a quote or a backslash.

    A value holding neither (nearly every one) is stored as it is. Otherwise, and for a
    value that starts with :data:`PROPERTY_ESCAPE`, the stored value is that prefix and
    the value with ``%``, ``'`` and ``\`` percent-encoded (``%25``, ``%27``, ``%5C``).
    """
    if not any(c in value for c in _UNSAFE) and not value.startswith(PROPERTY_ESCAPE):
        return value
    return PROPERTY_ESCAPE + "".join(_ENCODE.get(c, c) for c in value)


def decode_property(stored: str) -> str:
    """The value :func:`encode_property` stored as ``stored``."""
    if not stored.startswith(PROPERTY_ESCAPE):
        return stored
    body = stored[len(PROPERTY_ESCAPE) :]
    return _DECODE.sub(lambda m: {"25": "%", "27": "'", "5C": "\\"}[m.group(1)], body)


def sql_type(column: str, type_text: str) -> str:
    """A column's Spark SQL type as written into ``CREATE TABLE``, checked to be only a type.

    Raises:
        ConfigError: the type holds anything but letters, digits and ``_<>(),:`` and
            spaces (a struct field name with a quote or a backtick, say).
    """
    if not _TYPE.fullmatch(type_text):
        raise ConfigError(
            f"column {column!r} has the type {type_text!r}, which sparkanon does not write "
            "into a CREATE TABLE statement; publish it as a plain type"
        )
    return type_text
