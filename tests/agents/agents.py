"""How each real agent is installed, configured under tmp_path, and run headless.

Every agent gets a HOME (and its own config directory) under the test's tmp_path, so the
user's real configuration is never read or written; telemetry, update checks and other
non-essential traffic are off, and the only network peer is the fake model on 127.0.0.1.
Each agent starts `askbridge mcp --data-dir D --host auto` as its MCP server: auto, so it
attaches to the same host as the editor's `askbridge serve` on D (inline hosts would be two
separate hosts, and the editor would never see the agent's questions). So these tests run in
the auto host mode only, and on real seconds: the agents are separate binaries, out of reach
of the injected clock, so timed questions use deadlines of a few seconds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from askbridge.testing import AskbridgeClient

AGENTS = Path(__file__).resolve().parent
BIN = AGENTS / "npm" / "node_modules" / ".bin"
ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))
RUN_TIMEOUT_S = 180


def install_agents() -> None:
    """npm-install the pinned agents (idempotent); a failure fails the test, never skips."""
    proc = subprocess.run(
        ["bash", str(AGENTS / "install.sh")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, f"install.sh exited {proc.returncode}:\n{proc.stderr[-4000:]}"


def mcp_server(data_dir: Path, ask_timeout: int = 120) -> dict[str, object]:
    args = ["mcp", "--data-dir", str(data_dir), "--host", "auto"]
    args += os.environ.get("AGENT_MCP_ARGS", "").split()
    return {"command": ASKBRIDGE, "args": [*args, "--ask-timeout", str(ask_timeout)]}


@asynccontextmanager
async def editor_on(data_dir: Path) -> AsyncIterator[AskbridgeClient]:
    """The editor: the harness client on `askbridge serve --host auto` on the agent's data
    directory, so it follows the agent's external session (M2) and answers its questions."""
    async with AskbridgeClient.connect(data_dir=data_dir, host="auto") as client:
        yield client


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str


def base_env(home: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    keep = {
        k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR", "TERM", "PYTHONPATH")
    }
    return {
        **keep,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "NO_PROXY": "127.0.0.1,localhost",
        "DO_NOT_TRACK": "1",
        "CI": "1",
    }


def run(cmd: list[str], env: dict[str, str], cwd: Path, timeout: float = RUN_TIMEOUT_S) -> Run:
    """Run an agent to its end in its own process group (the caller's thread blocks)."""
    proc = subprocess.run(
        cmd,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        start_new_session=True,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


async def run_agent(
    agent: Callable[..., Run], model_url: str, tmp_path: Path, **options: Any
) -> Run:
    """Run one agent (`claude`, `codex`, `gemini` below) on the test's folders, off the event
    loop so the editor in the test's loop keeps answering; a non-zero exit fails the test."""
    (tmp_path / "work").mkdir(exist_ok=True)

    def go() -> Run:
        return agent(
            "Go ahead.",
            model_url=model_url,
            data_dir=tmp_path / "data",
            home=tmp_path / "home",
            cwd=tmp_path / "work",
            **options,
        )

    done = await anyio.to_thread.run_sync(go)
    name = agent.__name__
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


# -- Claude Code ----------------------------------------------------------------------------

CLAUDE_TOOLS = ("mcp__askbridge__ask_user_question", "mcp__askbridge__get_answers")


def claude(
    prompt: str,
    *,
    model_url: str,
    data_dir: Path,
    home: Path,
    cwd: Path,
    extra: Sequence[str] = (),
    ask_timeout: int = 120,
) -> Run:
    """`claude -p` with askbridge as its only MCP server (--strict-mcp-config)."""
    config = home / "mcp.json"
    home.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"mcpServers": {"askbridge": mcp_server(data_dir, ask_timeout)}}))
    env = {
        **base_env(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_ENABLE_TELEMETRY": "0",
        "MCP_TIMEOUT": "30000",
    }
    cmd = [str(BIN / "claude"), "-p", prompt, "--output-format", "json"]
    cmd += ["--mcp-config", str(config), "--strict-mcp-config"]
    cmd += ["--allowedTools", ",".join(CLAUDE_TOOLS), *extra]
    return run(cmd, env, cwd)


# -- Codex CLI ------------------------------------------------------------------------------


def codex(
    prompt: str,
    *,
    model_url: str,
    data_dir: Path,
    home: Path,
    cwd: Path,
    ask_timeout: int = 120,
    tool_timeout_sec: int | None = None,
) -> Run:
    """`codex exec` on a custom model provider (the fake model's Responses API) in a
    CODEX_HOME under tmp_path, askbridge its MCP server."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    server = mcp_server(data_dir, ask_timeout)
    lines = [
        'model = "gpt-5"',
        'model_provider = "fake"',
        'approval_policy = "never"',
        'sandbox_mode = "workspace-write"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[feedback]",
        "enabled = false",
        # Codex 0.171 defers every MCP tool behind tool search, which is off for a model it
        # does not know: without this the model never sees askbridge's tools.
        "[features]",
        "tool_search_always_defer_mcp_tools = false",
        "tool_search = true",
        "[model_providers.fake]",
        'name = "fake"',
        f'base_url = "{model_url}/v1"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "[mcp_servers.askbridge]",
        f"command = {json.dumps(server['command'])}",
        f"args = {json.dumps(server['args'])}",
        "required = true",  # the first model request waits for askbridge's tools
        'default_tools_approval_mode = "approve"',  # approval_policy=never refuses them else
    ]
    if "PYTHONPATH" in os.environ:  # Codex starts MCP servers with a scrubbed environment
        lines.append(f"env = {{ PYTHONPATH = {json.dumps(os.environ['PYTHONPATH'])} }}")
    if tool_timeout_sec is not None:
        lines.append(f"tool_timeout_sec = {tool_timeout_sec}")
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")
    env = {
        **base_env(home),
        "CODEX_HOME": str(codex_home),
        "OPENAI_API_KEY": "sk-fake",
        "RUST_LOG": os.environ.get("AGENT_RUST_LOG", "warn"),
    }
    cmd = [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--json", prompt]
    return run(cmd, env, cwd)


# -- Gemini CLI -----------------------------------------------------------------------------


def gemini(
    prompt: str,
    *,
    model_url: str,
    data_dir: Path,
    home: Path,
    cwd: Path,
    ask_timeout: int = 120,
    trusted: bool = True,
) -> Run:
    """`gemini -p` on an API key whose endpoint is GOOGLE_GEMINI_BASE_URL (the fake model).
    Gemini CLI starts no MCP server in a folder the user has not trusted, so `trusted`
    writes ~/.gemini/trustedFolders.json as its trust dialog would."""
    gemini_dir = home / ".gemini"
    gemini_dir.mkdir(parents=True, exist_ok=True)
    server = {**mcp_server(data_dir, ask_timeout), "trust": True}
    settings = {
        "mcpServers": {"askbridge": server},
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    }
    (gemini_dir / "settings.json").write_text(json.dumps(settings))
    if trusted:
        (gemini_dir / "trustedFolders.json").write_text(json.dumps({str(cwd): "TRUST_FOLDER"}))
    env = {
        **base_env(home),
        "GEMINI_API_KEY": "fake-key",
        "GOOGLE_GEMINI_BASE_URL": model_url,
        "GEMINI_CLI_NO_RELAUNCH": "true",
    }
    # A fixed model: "auto" would first ask a classifier model which one to use.
    cmd = [str(BIN / "gemini"), "-p", prompt, "--output-format", "json", "-m", "gemini-2.5-flash"]
    return run(cmd, env, cwd)
