--- The one vim.lsp client talking to `askbridge serve`.
---
--- `M.start()` launches the server through vim.lsp.start (vim.lsp.start_client
--- on 0.10) with our transport (see transport.lua for why), declares
--- `capabilities.experimental.userQuestions = {version = 1}` and installs the
--- handlers for the server's requests and notifications. `M.with_client(fn)`
--- runs `fn(client)` once the client is initialized, starting it if needed.
--- `M.request()` / `M.cancel_request()` hide the 0.10 (dot) vs 0.11 (colon)
--- method call styles.

local config = require('askbridge.config')
local notify = require('askbridge.notify')
local transport = require('askbridge.transport')

local M = {}

M.NAME = 'askbridge'

--- @type integer?
M.client_id = nil

--- Callbacks waiting for the client to finish `initialize`.
local ready_waiters = {}

local has_011 = vim.fn.has('nvim-0.11') == 1

--- @return vim.lsp.Client?
function M.get()
  if not M.client_id then
    return nil
  end
  local client = vim.lsp.get_client_by_id(M.client_id)
  if not client then
    return nil
  end
  local stopped
  if has_011 then
    stopped = client:is_stopped()
  else
    stopped = client.is_stopped()
  end
  return not stopped and client or nil
end

function M.request(client, method, params, handler)
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

function M.cancel_request(client, id)
  if has_011 then
    return client:cancel_request(id)
  end
  return client.cancel_request(id)
end

function M.notify(client, method, params)
  if has_011 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

--- Routes `$/progress`: claim frames (`{remainingMs}`) to their card, anything
--- else to Neovim's own work-done progress handler.
local function progress_handler(err, params, ctx)
  if require('askbridge.claims').on_progress(params) then
    return
  end
  return vim.lsp.handlers['$/progress'](err, params, ctx)
end

local function handlers()
  return {
    ['userQuestions/ask'] = function(...)
      return require('askbridge.ask').handle(...)
    end,
    ['userQuestions/didChange'] = function(...)
      return require('askbridge.views').on_did_change(...)
    end,
    ['session/update'] = function(...)
      return require('askbridge.session').on_update(...)
    end,
    ['$/progress'] = progress_handler,
  }
end

local function capabilities()
  return vim.tbl_deep_extend('force', vim.lsp.protocol.make_client_capabilities(), {
    experimental = { userQuestions = { version = 1 } },
  })
end

local function spawn_env()
  local env = config.options.cmd_env
  if not env then
    return nil
  end
  local strings = {}
  for key, value in pairs(env) do
    strings[key] = tostring(value)
  end
  return strings
end

local function on_init(client)
  M.client_id = client.id
  local waiters = ready_waiters
  ready_waiters = {}
  for _, fn in ipairs(waiters) do
    fn(client)
  end
end

--- vim.lsp passes 0 (transport.lua says why): the real status is transport.last_exit.
local function on_exit(_, _, client_id)
  local last = transport.last_exit or { code = 0, signal = 0, stderr = '' }
  local message = ('server exited with status %d'):format(last.code)
  if last.signal ~= 0 then
    message = ('%s (signal %d)'):format(message, last.signal)
  end
  if client_id == M.client_id then
    M.client_id = nil
    M.exit_code = last.code
    if last.code ~= 0 or (last.signal ~= 0 and not M.stopping) then
      notify.error(('%s:\n%s'):format(message, vim.trim(last.stderr)))
    elseif M.stopping then
      notify.info('server stopped')
    end
    M.stopping = false
    require('askbridge.claims').drop_all()
    require('askbridge.views').forget()
    for _, card in pairs(require('askbridge.card').open_cards) do
      card:close('server_exited')
    end
  end
  local waiters = ready_waiters
  ready_waiters = {}
  for _, fn in ipairs(waiters) do
    fn(nil, message, true) -- already reported above
  end
end

--- Why the program `prog` cannot be started, or nil when it can. A bare name that is
--- not found is missing from PATH (not "not executable": that would send the user to
--- chmod); a path says whether it is missing or there but not executable.
--- @param prog string
--- @return string?
function M.why_unusable(prog)
  if vim.fn.executable(prog) == 1 then
    return nil
  end
  if not prog:find('/', 1, true) then
    return ('%s is not on PATH'):format(prog)
  end
  if (vim.uv or vim.loop).fs_stat(prog) == nil then
    return ('%s does not exist'):format(prog)
  end
  return ('%s is not executable'):format(prog)
end

--- Starts the server unless it runs. Returns the client id, or nil and an error.
--- @return integer?, string?
function M.start()
  if M.get() then
    return M.client_id
  end
  local cmd = config.server_cmd()
  local unusable = M.why_unusable(cmd[1])
  if unusable then
    return nil, ('askbridge: %s (set cmd in setup{})'):format(unusable)
  end
  local lsp_config = {
    name = M.NAME,
    cmd = transport.factory(cmd, { cwd = config.options.cmd_cwd, env = spawn_env() }),
    root_dir = config.options.cmd_cwd or vim.fn.getcwd(),
    capabilities = capabilities(),
    handlers = handlers(),
    init_options = config.initialization_options(),
    on_init = on_init,
    on_exit = on_exit,
  }
  local ok, id
  if has_011 then
    ok, id = pcall(vim.lsp.start, lsp_config, { attach = false, silent = true })
  else
    ok, id = pcall(vim.lsp.start_client, lsp_config)
  end
  if not ok or not id then
    return nil, ('askbridge: could not start %s: %s'):format(vim.inspect(cmd), tostring(id))
  end
  M.client_id = id
  return id
end

--- Runs `fn(client)` when the client is initialized (starting it if needed);
--- `fn(nil, err, reported)` if it cannot start (`reported`: the user was told).
--- @param fn fun(client: vim.lsp.Client?, err: string?, reported: boolean?)
function M.with_client(fn)
  local client = M.get()
  if client and client.initialized then
    fn(client)
    return
  end
  table.insert(ready_waiters, fn)
  if not client then
    local _, err = M.start()
    if err then
      local waiters = ready_waiters
      ready_waiters = {}
      for _, waiter in ipairs(waiters) do
        waiter(nil, err)
      end
    end
  end
end

--- Sends `method` once the client is ready; `callback(err, result)`.
function M.call(method, params, callback)
  M.with_client(function(client, start_err, reported)
    if not client then
      callback({ code = -32603, message = start_err, reported = reported }, nil)
      return
    end
    local ok = M.request(client, method, params, function(err, result)
      callback(err, result)
    end)
    if not ok then
      callback({ code = -32603, message = 'askbridge: the server connection is closed' }, nil)
    end
  end)
end

--- Stops the server (shutdown + exit); says "server stopped" once it has.
--- Returns false when no server runs.
function M.stop()
  local client = M.get()
  if not client then
    return false
  end
  M.stopping = true
  if has_011 then
    client:stop()
  else
    client.stop()
  end
  return true
end

return M
