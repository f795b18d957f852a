--- :checkhealth askbridge — Neovim version, server command, running client,
--- and whether the server speaks userQuestions v1.

local M = {}

function M.check()
  local health = vim.health
  health.start('askbridge')

  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim 0.10 or newer is required')
  end

  local config = require('askbridge.config')
  if require('askbridge').did_setup then
    health.ok('setup() was called')
  else
    health.info('setup() was not called: the defaults apply')
  end

  local cmd = config.server_cmd()
  if vim.fn.executable(cmd[1]) == 1 then
    health.ok(('server command: %s'):format(table.concat(cmd, ' ')))
  else
    health.error(
      ('%s is not executable'):format(cmd[1]),
      {
        'Install askbridge from a clone (pipx install /path/to/askbridge), or set'
          .. ' cmd = {"/path/to/askbridge/.venv/bin/askbridge", "serve"}'
          .. ' (see :help askbridge-intro)',
      }
    )
    return
  end

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
  health.info(('%d continued question(s)'):format(pending))
end

return M
