--- askbridge for Neovim: answer an AI agent's questions from your editor.
---
--- Neovim 0.10 or newer; an older one gets one line saying so (version.lua).
---
--- `require("askbridge").setup{cmd = {...}, data_dir = ...}` starts
--- `askbridge serve` as a vim.lsp client that renders `userQuestions/ask`
--- itself (vim.ui.select / vim.ui.input). The functions below back the
--- :Askbridge* commands (plugin/askbridge.lua) and are the Lua API; see
--- :help askbridge. Module map: config (options), client (the vim.lsp
--- client), transport (stdio JSON-RPC that knows request ids), ask + card +
--- question + intents (rendering a batch), screen (one card at a time),
--- countdown + claims (timed waits), views (the folded question views),
--- replies (late replies), session (session/new, list, load, prompt, cancel,
--- updates), notify (messages), health (:checkhealth askbridge), project
--- (setup() calls from a project's files, which may not choose what runs).
---
--- Several windows: every Neovim on one data directory runs its own
--- `askbridge serve`, and each attaches to the data directory's one host
--- (started by the first, `--host auto`). A window shows the questions of
--- the sessions it follows — created or loaded in it — and of every external
--- agent (`askbridge mcp`), with no command; the first answer wins, and the
--- server withdraws the question from the other windows, which say why
--- (ask.lua). See :help askbridge-windows.

local version = require('askbridge.version')
if not version.supported() then
  return version.stub()
end

local client_mod = require('askbridge.client')
local config = require('askbridge.config')
local notify = require('askbridge.notify')

local M = {}

M.did_setup = false

--- @param opts askbridge.Options?
function M.setup(opts)
  local own, dropped, project_file = require('askbridge.project').filter(opts or {})
  if project_file then
    if #dropped > 0 then
      notify.warn(
        ('setup() in %s (a project file) may not set %s: only your own config chooses what runs'
          .. ' (:help askbridge-project-files)'):format(project_file, table.concat(dropped, ', '))
      )
    end
    config.apply(own, config.options) -- the user's own cmd, model, ... stay
  else
    config.apply(opts)
  end
  M.did_setup = true
  if config.options.autostart then
    local _, err = client_mod.start()
    if err then
      notify.warn(err)
    end
  end
end

local report = notify.report

--- Starts a new session. `callback(err, session_id)` (default: notifies).
function M.new_session(opts, callback)
  require('askbridge.session').new(opts, callback or function(err, session_id)
    if err then
      report(err)
    else
      notify.info('new session ' .. session_id)
    end
  end)
end

--- Prompts the current session. `callback(err, stop_reason, session_id)`.
function M.prompt(text, callback, session_id)
  require('askbridge.session').prompt(text, callback or function(err, stop_reason)
    if err then
      report(err)
    elseif stop_reason ~= 'end_turn' then
      notify.info('turn ended: ' .. tostring(stop_reason))
    end
  end, session_id)
end

--- Cancels the current session's turn (session/cancel).
function M.cancel(session_id)
  return require('askbridge.session').cancel(session_id)
end

--- The current session id, if any.
function M.current_session()
  return require('askbridge.session').current
end

--- Continued questions known from userQuestions/didChange (no refresh).
function M.pending()
  return require('askbridge.views').continued()
end

function M.show_pending()
  require('askbridge.views').show_pending()
end

--- Answers a continued question late (:AskbridgeAnswer).
function M.answer(call_id)
  require('askbridge.replies').answer(call_id)
end

--- Lists the stored sessions in a picker and loads the chosen one (:AskbridgeSessions).
function M.sessions()
  require('askbridge.session').pick()
end

--- Loads a stored session and makes it current. `callback(err, continued_count)`.
function M.load_session(session_id, callback)
  require('askbridge.session').load(session_id, callback or function(err, count)
    if err then
      report(err)
    else
      local continued = notify.plural(count, 'continued question')
      notify.info(('loaded session %s: %s'):format(session_id, continued))
    end
  end)
end

--- Adds more_time_seconds to every timed card counting down. Returns how many.
function M.more_time()
  local count = 0
  for _, card in pairs(require('askbridge.card').open_cards) do
    if card:more_time() then
      count = count + 1
    end
  end
  return count
end

--- Short text for a statusline: seconds left on a timed card, or the number
--- of continued questions; "" when there is nothing to say.
function M.status()
  local least
  for _, card in pairs(require('askbridge.card').open_cards) do
    local left = card:seconds_left()
    if left and (not least or left < least) then
      least = left
    end
  end
  if least then
    return ('askbridge: %ds left'):format(least)
  end
  local pending = #require('askbridge.views').continued()
  if pending > 0 then
    return ('askbridge: %d pending'):format(pending)
  end
  return ''
end

--- Stops the server; it says "server stopped" once it has. Returns false
--- (and says so) when no server runs.
function M.stop()
  if client_mod.stop() then
    return true
  end
  notify.info('the server is not running')
  return false
end

return M
