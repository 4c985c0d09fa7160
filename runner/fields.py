"""Validated value types of plans, and the error a plan validator raises for a field.

Plan values end up in argv elements and environment variables of benchmark processes, so they
are restricted to characters that cannot be mistaken for shell syntax even by a script that
passes them on carelessly.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, StringConstraints
from pydantic_core import PydanticCustomError

SAFE_VALUE = r"^[A-Za-z0-9/#][A-Za-z0-9._:/@+=#-]*$"
SafeValue = Annotated[str, StringConstraints(pattern=SAFE_VALUE, max_length=400)]
Name = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._:+-]*$", max_length=120)]
Word = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=60)]
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=120)]
EnvValue = Annotated[str, StringConstraints(pattern=r"^[^\x00\r\n]*$", max_length=4096)]
RunId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=120)]
Argv = list[Annotated[str, StringConstraints(max_length=4096)]]
Scenario = Literal["fixed-seq-len", "agentic-coding"]

STRICT = ConfigDict(extra="forbid", frozen=True)


def field_error(field: str, reason: str) -> PydanticCustomError:
    # The field goes into the error context; plan_error appends it to the pydantic location.
    return PydanticCustomError("plan", "{field}: {reason}", {"field": field, "reason": reason})
