"""The machinery of every page's URL state: tolerant parsing of a query string into a frozen
pydantic model (a bad value is dropped with a notice, never a crash) and the minimal query string
back (defaults left out). The page models themselves are in `views.query.state`."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlencode

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError

from ingest.contract.derived import ON_CHANGE

RawQuery = Mapping[str, Sequence[str]]


def one_of(
    choices: Iterable[tuple[object, str]] | Callable[[], Iterable[tuple[object, str]]],
) -> AfterValidator:
    """A validator that accepts only the values of a choice list (or of the list a function
    gives when a value is checked)."""
    fixed = None if callable(choices) else [str(c) for c, _ in choices]

    def check(v: str) -> str:
        allowed = fixed if fixed is not None else [str(c) for c, _ in choices()]  # type: ignore[operator]
        if v not in allowed:
            raise ValueError(f"expected one of {', '.join(allowed)}")
        return v

    return AfterValidator(check)


def split_values(raw: str | Sequence[str] | None) -> tuple[str, ...]:
    """Comma-separated and/or repeated values, stripped, de-duplicated, order kept."""
    if raw is None:
        return ()
    items = [raw] if isinstance(raw, str) else list(raw)
    out: dict[str, None] = {}
    for item in items:
        for part in str(item).split(","):
            if part.strip():
                out[part.strip()] = None
    return tuple(out)


def parse_query(query: str) -> dict[str, list[str]]:
    """A query string (with or without the leading '?') as a key -> values mapping."""
    return parse_qs(query.lstrip("?"), keep_blank_values=True)


class View(BaseModel):
    """Shared machinery: tolerant parsing from a query and minimal query strings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # field name -> query key, where they differ
    query_keys: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def _raw(cls, query: RawQuery) -> dict[str, Any]:
        names = {v: k for k, v in cls.query_keys.items()}
        raw: dict[str, Any] = {}
        for key, values in query.items():
            field = names.get(key, key)
            if field not in cls.model_fields:
                continue
            info = cls.model_fields[field]
            if isinstance(info.default, tuple):
                raw[field] = split_values(values)
            elif values and values[-1] != "":
                raw[field] = values[-1]
        return raw

    @classmethod
    def known_key(cls, key: str) -> bool:
        """Whether a query key means something to this view (the others are named as ignored)."""
        names = {v: k for k, v in cls.query_keys.items()}
        return names.get(key, key) in cls.model_fields

    @classmethod
    def parse(cls, query: RawQuery | str) -> tuple[Self, list[str]]:
        """The view a query describes, and a notice for every value that had to be dropped
        (every key the view does not know, too: a mistyped parameter never vanishes silently).

        A query string is parsed once: a page's GET asks for its view from the HTML shell, the
        plotly bundle choice, the preloads and the static chart, and the layout once more; the
        views are frozen and parsing reads nothing but the string, so each asks `_parsed`."""
        if isinstance(query, str):
            view, notes = _parsed(cls, query)
            return view, list(notes)  # type: ignore[return-value]  # _parsed(cls, ...) is a cls
        return cls._parse(query)

    @classmethod
    def _parse(cls, q: RawQuery) -> tuple[Self, list[str]]:
        view, notes = cls.tolerant(cls._raw(q))
        unknown = [
            f"ignored {key[:40]}={','.join(values)[:60]}: not a parameter of this page"
            for key, values in q.items()
            if not cls.known_key(key)
        ]
        return view, [*notes, *unknown]

    @classmethod
    def tolerant(cls, raw: dict[str, Any]) -> tuple[Self, list[str]]:
        """Validate `raw`, dropping (and reporting) the fields that do not validate."""
        notes: list[str] = []
        for _ in range(len(raw) + 1):
            try:
                return cls.model_validate(raw), notes
            except ValidationError as exc:
                for err in exc.errors():
                    field = str(err["loc"][0]) if err["loc"] else ""
                    if field in raw:
                        key = cls.query_keys.get(field, field)
                        value = raw.pop(field)
                        value = ",".join(value) if isinstance(value, tuple) else str(value)
                        value = value[:60]
                        notes.append(f"ignored {key}={value}: {err['msg']}")
        return cls(), notes

    def query(self) -> str:
        """The minimal query string of this view (defaults left out), without '?'."""
        pairs: list[tuple[str, str]] = []
        defaults = type(self)()
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value == getattr(defaults, name):
                continue
            key = self.query_keys.get(name, name)
            if isinstance(value, tuple):
                pairs.append((key, ",".join(value)))
            elif isinstance(value, bool):
                pairs.append((key, "1"))
            elif isinstance(value, float):
                pairs.append((key, f"{value:g}"))
            elif value is not None:
                pairs.append((key, str(value)))
        return urlencode(pairs, safe=",:/")

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (validated)."""
        return type(self).model_validate({**self.model_dump(), **changes})


@functools.lru_cache(maxsize=512)
def _parsed(cls: type[View], query: str) -> tuple[View, tuple[str, ...]]:
    view, notes = cls._parse(parse_query(query))
    return view, tuple(notes)


# The y-axis choices follow the declared derived metrics: a view parsed before one was declared
# (or removed) is parsed again.
ON_CHANGE.append(_parsed.cache_clear)
