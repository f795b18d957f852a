--- Options of `require("askbridge").setup{...}`, their defaults and their checks.
---
--- `M.options` holds the merged options after setup; every other module reads
--- them from here. `M.server_cmd()` is the full command line the plugin runs.

local M = {}

--- @class askbridge.Options
M.defaults = {
  --- Command that starts the server; `--data-dir` is appended when data_dir is set.
  cmd = { 'askbridge', 'serve' },
  --- Where the server keeps its sessions (nil: the server's default,
  --- $XDG_STATE_HOME/askbridge or ~/.local/state/askbridge).
  data_dir = nil,
  --- Extra environment for the server process.
  cmd_env = nil,
  --- Working directory of the server process (nil: Neovim's cwd).
  cmd_cwd = nil,
  --- ModelSpec for new sessions, sent as initializationOptions.model (protocol.md).
  model = nil,
  --- `{mode = "timed"|"legacy", timeout = seconds}` for new sessions.
  ask_user_question = nil,
  --- Start the server from setup() (false: on the first command that needs it).
  autostart = true,
  --- Seconds the "More time" choice (and :AskbridgeMoreTime) adds to a timed question.
  more_time_seconds = 60,
  --- How long a timed card waits for the server's first countdown frame before
  --- it is shown anyway (milliseconds).
  claim_wait_ms = 500,
  --- Show the agent's messages with vim.notify when a turn ends.
  notify_agent_messages = true,
}

--- Expected Lua type of every option (options whose default is nil included).
M.types = {
  cmd = 'table',
  data_dir = 'string',
  cmd_env = 'table',
  cmd_cwd = 'string',
  model = 'table',
  ask_user_question = 'table',
  autostart = 'boolean',
  more_time_seconds = 'number',
  claim_wait_ms = 'number',
  notify_agent_messages = 'boolean',
}

--- @type askbridge.Options
M.options = vim.deepcopy(M.defaults)

--- `opts` checked and laid over `base` (default: the defaults).
--- @param opts table?
--- @param base askbridge.Options?
--- @return askbridge.Options
function M.apply(opts, base)
  opts = opts or {}
  for name, value in pairs(opts) do
    local expected = M.types[name]
    if not expected then
      error(('askbridge: unknown option %q'):format(name))
    end
    if value ~= nil and type(value) ~= expected then
      error(('askbridge: option %s must be a %s, got %s'):format(name, expected, type(value)))
    end
  end
  if opts.cmd and #opts.cmd == 0 then
    error('askbridge: cmd must name a program')
  end
  M.options = vim.tbl_extend('force', vim.deepcopy(base or M.defaults), opts)
  return M.options
end

--- @return string[]
function M.server_cmd()
  local cmd = vim.deepcopy(M.options.cmd)
  if M.options.data_dir then
    vim.list_extend(cmd, { '--data-dir', vim.fn.expand(M.options.data_dir) })
  end
  return cmd
end

--- initializationOptions for `initialize` (protocol.md Lifecycle), or nil.
--- @return table?
function M.initialization_options()
  local init = {}
  if M.options.model then
    init.model = M.options.model
  end
  if M.options.ask_user_question then
    init.askUserQuestion = M.options.ask_user_question
  end
  return next(init) and init or nil
end

return M
