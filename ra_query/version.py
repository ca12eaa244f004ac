"""ra's version: what `ra --version` and `ra-query --version` print and every manifest records.

Kept in step with `version` in pyproject.toml and packages/ra-query/pyproject.toml.
"""

__version__ = "0.1.0"
