"""The config of hierarchy builders (``attributes[].builder`` of a categorical attribute).

A categorical attribute takes an ARX hierarchy file (``hierarchy``) or a ``builder`` that
generates the hierarchy from the column's distinct values, as ARX's hierarchy builders do
(:mod:`sparkanon.attributes.builders` builds it; the checks that need no data are
:func:`sparkanon.attributes.builders.builder_problem`). One class per ``type``:

* :class:`IntervalsBuilder`: intervals over numbers or dates (``values: date``);
* :class:`GroupsBuilder`: groups of consecutive values of a declared order;
* :class:`MaskBuilder`: fixed-length codes masked from the right.
"""

from __future__ import annotations

import datetime
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sparkanon.models.base import Float, Int

Point = Union[Float, str]  # noqa: UP007 (pydantic reads the union as given)
"""A number, or (``values: date``) a date: ISO text ``2020-01-31`` (a YAML date becomes it)."""


class _Builder(BaseModel):
    """What every builder takes.

    Attributes:
        from_level: values are recoded to their node at this level before anything else
            (0: the values themselves), so every family publishes at least that level.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    from_level: Annotated[Int, Field(ge=0)] = 0


class IntervalsBuilder(_Builder):
    """Intervals over numbers or dates (ARX's interval-based builder).

    Give exactly one of ``widths``, ``quantiles`` and ``bounds``.

    Attributes:
        values: ``number`` or ``date`` (text parsed with ``format``, or date-typed values).
        format: strptime pattern of date text (``values: date``).
        widths: per level, finest first, intervals of this width (days for dates), each a
            larger multiple of the one before, aligned at ``origin``.
        origin: where the width grid starts (a number; for dates a date, or days since
            1970-01-01).
        quantiles: per level, finest first, the number of intervals, each holding about
            the same rows; each count divides the one before so the levels nest.
        bounds: the finest level's half-open intervals ``[lo, hi)``, in increasing order,
            not overlapping (gaps are allowed: a value in one is invalid).
        merge: per coarser level, how many consecutive intervals of the level below make
            one interval.
        top: values ``>= top`` publish ``>=top`` at every level below the root.
        bottom: values ``< bottom`` publish ``<bottom`` at every level below the root.
    """

    type: Literal["intervals"]
    values: Literal["number", "date"] = "number"
    format: str = "%Y-%m-%d"
    widths: tuple[Annotated[Float, Field(gt=0)], ...] | None = Field(default=None, min_length=1)
    origin: Point = 0.0
    quantiles: tuple[Annotated[Int, Field(ge=2)], ...] | None = Field(default=None, min_length=1)
    bounds: tuple[tuple[Point, Point], ...] | None = Field(default=None, min_length=1)
    merge: tuple[Annotated[Int, Field(ge=2)], ...] = ()
    top: Point | None = None
    bottom: Point | None = None

    @field_validator("origin", "top", "bottom", "bounds", mode="before")
    @classmethod
    def _dates_as_iso_text(cls, raw: Any) -> Any:
        """A YAML date as its ISO text, so a resolved config loads back as itself."""
        if isinstance(raw, (list, tuple)):
            return [cls._dates_as_iso_text(v) for v in raw]
        return raw.isoformat() if isinstance(raw, datetime.date) else raw


class GroupsBuilder(_Builder):
    """Groups of consecutive values of a declared order (ARX's order-based builder).

    Attributes:
        order: every value the column may hold, in order.
        sizes: per level, finest first, values per group, each a larger multiple of the
            one before (the groups nest).
    """

    type: Literal["groups"]
    order: tuple[str, ...]
    sizes: tuple[Annotated[Int, Field(ge=2)], ...] = Field(min_length=1)


class MaskBuilder(_Builder):
    """Fixed-length codes masked from the right (ARX's redaction-based builder).

    Attributes:
        length: characters of every code (a value of another length is invalid).
        masked: per level, finest first, how many characters are masked, increasing, at
            most ``length`` (``length`` masks the whole code: the root).
        char: the masking character.
    """

    type: Literal["mask"]
    length: Annotated[Int, Field(ge=1)]
    masked: tuple[Annotated[Int, Field(ge=1)], ...] = Field(min_length=1)
    char: str = Field(default="*", min_length=1, max_length=1)


BuilderConfig = Annotated[
    Union[IntervalsBuilder, GroupsBuilder, MaskBuilder],  # noqa: UP007
    Field(discriminator="type"),
]
"""One ``attributes[].builder``, validated into the class its ``type`` selects."""
