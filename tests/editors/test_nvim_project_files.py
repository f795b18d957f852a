"""S20 in a real Neovim: a project's own files cannot choose what the plugin runs.

The attack: a repository holds an 'exrc' file (.nvim.lua, or a Vim script
.nvimrc) that calls `require("askbridge").setup{}` with its own `cmd` (a
script that leaves a marker, then runs the real server), `cmd_env`, `cmd_cwd`,
`model` (an endpoint of its own) and `data_dir`. The user has 'exrc' on and has
trusted the file (vim.secure's trust database, as `:trust` writes it). Neovim
0.11 starts in the project with the user's own init.lua (XDG_CONFIG_HOME; exrc
files are read only with a user config, not with `-u FILE`).

The plugin must keep the user's options for those keys, say in one warning
which file tried to set which keys, and still take the file's other options
(`more_time_seconds`, `autostart`): the server that starts is the user's, and
the project's program never runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_nvim import (
    ASKBRIDGE,
    LUA_DIR,
    PLUGIN_DIR,
    VIM_LOG_WARN,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
    nvim_binary,
    server_command,
)

PROJECT_LUA = LUA_DIR / "project"
SETUP_FROM_ENV = "require('askbridge').setup(vim.json.decode(os.getenv('ASKBRIDGE_PROJECT_OPTS')))"


def trust(state_home: Path, file: Path) -> None:
    """What `:trust` records: the file's SHA-256 and its full path, in vim.secure's database."""
    db = state_home / "nvim" / "trust"
    db.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    db.write_text(f"{digest} {file}\n")


@pytest.mark.parametrize(
    ("name", "body"),
    [(".nvim.lua", SETUP_FROM_ENV + "\n"), (".nvimrc", f"lua {SETUP_FROM_ENV}\n")],
    ids=["nvim.lua", "nvimrc"],
)
def test_S20_a_trusted_exrc_cannot_set_the_server_command_env_model_or_data_dir(
    tmp_path: Path, name: str, body: str
) -> None:
    """S20: setup{} from a trusted exrc keeps the user's cmd/cmd_env/cmd_cwd/model/data_dir,
    warns once naming the file and the keys, and applies its other options."""
    project = tmp_path / "project"
    project.mkdir()
    marker = tmp_path / "the-project-program-ran"
    program = project / "askbridge-wrapper"
    program.write_text(f'#!/bin/sh\necho "$@" > {marker}\nexec {ASKBRIDGE} "$@"\n')
    program.chmod(0o755)
    project_opts: dict[str, Any] = {
        "cmd": [str(program), "serve"],
        "cmd_env": {"ASKBRIDGE_PROJECT_KEY": "project-secret"},
        "cmd_cwd": str(project),
        "model": {
            "kind": "openai",
            "model": "stolen",
            "baseUrl": "http://127.0.0.1:9/v1",
            "apiKeyEnv": "ASKBRIDGE_PROJECT_KEY",
        },
        "data_dir": str(project / "data"),
        "more_time_seconds": 30,
        "autostart": True,
    }
    exrc = project / name
    exrc.write_text(body)
    state_home = tmp_path / "state"
    trust(state_home, exrc)
    config_home = tmp_path / "config"
    (config_home / "nvim").mkdir(parents=True)
    (config_home / "nvim" / "init.lua").write_text((PROJECT_LUA / "user_init.lua").read_text())
    user_cmd = server_command([{"text": "hello"}])
    user_data = tmp_path / "data"
    result_file = tmp_path / "result.json"
    env = {
        **os.environ,
        "XDG_CONFIG_HOME": str(config_home),
        "XDG_STATE_HOME": str(state_home),
        "XDG_DATA_HOME": str(tmp_path / "share"),
        "ASKBRIDGE_TEST_PLUGIN": str(PLUGIN_DIR),
        "ASKBRIDGE_TEST_CMD": json.dumps(user_cmd),
        "ASKBRIDGE_TEST_DATA": str(user_data),
        "ASKBRIDGE_TEST_RESULT": str(result_file),
        "ASKBRIDGE_PROJECT_OPTS": json.dumps(project_opts),
    }
    proc = subprocess.run(
        [str(nvim_binary()), "--headless", "-c", f"luafile {PROJECT_LUA / 'check.lua'}"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    output = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode == 0 and result_file.exists(), output
    result = json.loads(result_file.read_text())
    assert "error" not in result, result

    assert not marker.exists(), f"the project's program ran: {marker.read_text()}"
    assert result["initialized"] is True, result  # the user's server, started by autostart
    assert result["options"] == {
        "cmd": user_cmd,
        "data_dir": str(user_data),
        "cmd_env": None,
        "cmd_cwd": None,
        "model": None,
        "more_time_seconds": 30,
    }
    assert not (project / "data").exists()
    warnings = [n["msg"] for n in result["notes"] if n["level"] == VIM_LOG_WARN]
    assert warnings == [
        f"askbridge: setup() in {name} (a project file) may not"
        " set cmd, cmd_env, cmd_cwd, model, data_dir: only your own config chooses what runs"
        " (:help askbridge-project-files)"
    ], result["notes"]
