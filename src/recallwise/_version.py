"""recallwise's release number: the one place it is written.

hatchling reads it from here for the package's metadata (``[tool.hatch.version]`` in pyproject.toml),
``recallwise.__version__``, ``recallwise --version``, ``GET /healthz`` and the OpenAPI document
read it from here, and the TypeScript client's ``package.json`` must carry the same number
(tests/test_version.py fails when it does not). docs/releasing.md says how a release bumps it.
"""

__version__ = "0.1.0"
