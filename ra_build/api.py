"""ra's build as a library: what a `dodo.py` or a script of yours calls.

    from pathlib import Path
    from ra_build import api
    globals().update(api.make_tasks(api.load_config(Path.cwd(), Path.home()), Path("artifacts")))

`load_config` reads the `.ra.toml` files that apply in a directory; `make_tasks` turns the
configuration into doit tasks (what `doit` runs); `eval_task` adds a task `eval` that asks the
built index a questions file, with floors (`doit eval`: docs/eval.md); `run_build` runs those
tasks under the build lock and says what ran (what `ra update` does); `pack` writes a release
artifact. These names are the supported surface: the modules behind them may move.
"""

from ra_build.artifacts.pack import pack
from ra_build.config.load import load_config
from ra_build.config.model import Config
from ra_build.pipeline.graph import eval_task, make_tasks
from ra_build.pipeline.run import BuildReport, run_build

__all__ = ["BuildReport", "Config", "eval_task", "load_config", "make_tasks", "pack", "run_build"]
