"""doit entry point: build this repo's own docs (see .ra.toml) into artifacts/. Wiring only."""

from pathlib import Path

from ra_build.api import load_config, make_tasks

_HERE = Path(__file__).resolve().parent
globals().update(make_tasks(load_config(_HERE, Path.home()), _HERE / "artifacts"))
