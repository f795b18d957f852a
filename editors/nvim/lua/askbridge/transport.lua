--- Stdio JSON-RPC transport for `askbridge serve`, handed to vim.lsp as a `cmd` function.
---
--- Why not `vim.lsp.rpc.start`: a server→client request handler in vim.lsp
--- never learns its JSON-RPC id, so it cannot tell which open card a
--- `$/cancelRequest {id}` from the server is about (protocol.md: "the client
--- closes the card and replies -32800"). This transport implements the
--- documented |vim.lsp.rpc.PublicClient| contract itself (request, notify,
--- is_closing, terminate) and adds exactly one thing: while a server request
--- is handled, `M.current_request()` returns its record, on which a handler
--- registers what to do when the server cancels it, and through which it may
--- reply before its coroutine returns (`M.respond`: a card whose countdown ran
--- out replies while a blocking picker still holds the coroutine). On
--- `$/cancelRequest` the transport answers -32800 at once and drops whatever
--- the handler returns later, as the protocol asks; a request is answered once.
---
--- vim.lsp is told that the process exited with status 0 whatever its real
--- status (kept in `M.last_exit`): client.lua reports a failed server with its
--- stderr, and vim.lsp's own "quit with exit code" warning would say it a
--- second time and point to lsp.log, where nothing about it is.
---
--- Everything else matches vim.lsp.rpc: handlers run inside a coroutine (so
--- they may yield and answer later, like vim.lsp's window/showMessageRequest),
--- notifications and responses are dispatched on the main loop in arrival
--- order, and -32800 answers to our own requests are not surfaced.

local framing = require('askbridge.framing')
local notify = require('askbridge.notify')

local M = {}

local REQUEST_CANCELLED = -32800
local INTERNAL_ERROR = -32603
local INVALID_SERVER_JSON = 2 -- vim.lsp.rpc.client_errors.INVALID_SERVER_JSON
local READ_ERROR = 4 -- vim.lsp.rpc.client_errors.READ_ERROR

--- The server request whose handler is running its synchronous part right now.
--- @type askbridge.ServerRequest?
local running_request = nil

--- How the last server process ended: {code, signal, stderr (its last chunks)}.
--- @type {code: integer, signal: integer, stderr: string}?
M.last_exit = nil

--- @class askbridge.ServerRequest
--- @field id integer|string JSON-RPC id chosen by the server
--- @field method string
--- @field replied boolean true once a response (result, error or -32800) was sent
--- @field cancelled boolean true when the server withdrew the request
--- @field rpc table the connection it came on
--- @field on_cancel fun(reason: string)[] run once when the server cancels ("cancelled")
---   or the connection ends ("exited")

--- The request record of the server request being dispatched, for handlers to call
--- in their synchronous part (before their first yield). nil outside a handler.
--- @return askbridge.ServerRequest?
function M.current_request()
  return running_request
end

--- Replies to a server request now, unless it was answered or cancelled already.
--- @param request askbridge.ServerRequest
--- @param err table? a JSON-RPC error
--- @param result any
function M.respond(request, err, result)
  request.rpc:respond(request, err, result)
end

--- @param request askbridge.ServerRequest
--- @param fn fun(reason: string)
function M.on_cancel(request, fn)
  if request.cancelled then
    vim.schedule(function()
      fn('cancelled')
    end)
  else
    table.insert(request.on_cancel, fn)
  end
end

local Rpc = {}
Rpc.__index = Rpc

--- @private
function Rpc:write(payload)
  if self:is_closing() then
    return false
  end
  local ok = pcall(self.proc.write, self.proc, framing.encode(payload))
  return ok
end

function Rpc:is_closing()
  return self.closing or self.proc == nil or self.proc:is_closing()
end

function Rpc:terminate()
  self.closing = true
  if self.proc and not self.proc:is_closing() then
    self.proc:kill(15)
  end
end

function Rpc:notify(method, params)
  return self:write({ jsonrpc = '2.0', method = method, params = params })
end

function Rpc:request(method, params, callback, notify_reply_callback)
  self.next_id = self.next_id + 1
  local id = self.next_id
  if not self:write({ jsonrpc = '2.0', id = id, method = method, params = params }) then
    return false, nil
  end
  self.callbacks[id] = callback
  self.reply_callbacks[id] = notify_reply_callback
  return true, id
end

--- Runs in a fast (luv) callback: only slices frames, and schedules the real
--- work in arrival order.
--- @private
function Rpc:on_stdout(err, chunk)
  if err then
    vim.schedule(function()
      self.dispatchers.on_error(READ_ERROR, err)
    end)
    return
  end
  if not chunk then
    return -- end of output; the exit callback reports the process end
  end
  for _, body in ipairs(self.decode(chunk)) do
    vim.schedule(function()
      self:dispatch(body)
    end)
  end
end

--- @private
function Rpc:dispatch(body)
  local ok, message = pcall(vim.json.decode, body, { luanil = { object = true } })
  if not ok or type(message) ~= 'table' then
    self.dispatchers.on_error(INVALID_SERVER_JSON, body)
  elseif type(message.method) == 'string' and message.id ~= nil then
    self:serve_request(message)
  elseif type(message.method) == 'string' then
    self:on_notification(message.method, message.params)
  elseif message.id ~= nil then
    self:on_response(message)
  end
end

--- @private
function Rpc:on_response(message)
  local id = message.id
  local callback = self.callbacks[id]
  local reply_callback = self.reply_callbacks[id]
  self.callbacks[id] = nil
  self.reply_callbacks[id] = nil
  if reply_callback then
    reply_callback(id)
  end
  if message.error and message.error.code == REQUEST_CANCELLED then
    return -- our own cancellation acknowledged: nothing to report (as vim.lsp.rpc)
  end
  if message.error then
    setmetatable(message.error, { __tostring = vim.lsp.rpc.format_rpc_error })
  end
  if callback then
    local cb_ok, cb_err = pcall(callback, message.error, message.result)
    if not cb_ok then
      notify.error('response callback failed: ' .. tostring(cb_err))
    end
  end
end

--- @private
function Rpc:on_notification(method, params)
  if method == '$/cancelRequest' then
    local request = params and self.inflight[params.id]
    if request then
      self:cancel_server_request(request)
    end
    return
  end
  self.dispatchers.notification(method, params)
end

--- Tells the request's handler that nobody wants its answer any more.
--- @param request askbridge.ServerRequest
--- @param reason "cancelled"|"exited"
local function run_cancel_callbacks(request, reason)
  request.cancelled = true
  local callbacks = request.on_cancel
  request.on_cancel = {}
  for _, fn in ipairs(callbacks) do
    local ok, err = pcall(fn, reason)
    if not ok then
      notify.error('cancel callback failed: ' .. tostring(err))
    end
  end
end

--- @private
--- @param request askbridge.ServerRequest
function Rpc:cancel_server_request(request)
  if request.cancelled or request.replied then
    return
  end
  self:respond(request, { code = REQUEST_CANCELLED, message = 'Request cancelled' }, nil)
  run_cancel_callbacks(request, 'cancelled')
end

--- @private
function Rpc:respond(request, err, result)
  if request.replied then
    return -- a reply after $/cancelRequest is dropped (protocol.md)
  end
  request.replied = true
  self.inflight[request.id] = nil
  local payload = { jsonrpc = '2.0', id = request.id }
  if err then
    payload.error = err
  else
    payload.result = result == nil and vim.NIL or result
  end
  self:write(payload)
end

--- Runs the vim.lsp dispatcher for a server request in a coroutine, so the
--- handler may yield and reply later.
--- @private
function Rpc:serve_request(message)
  --- @type askbridge.ServerRequest
  local request = {
    id = message.id,
    method = message.method,
    replied = false,
    cancelled = false,
    on_cancel = {},
    rpc = self,
  }
  self.inflight[message.id] = request
  local co = coroutine.create(function()
    local ok, result, err =
      pcall(self.dispatchers.server_request, message.method, message.params)
    if not ok then
      err = { code = INTERNAL_ERROR, message = tostring(result) }
      result = nil
    end
    self:respond(request, err, result)
  end)
  local previous = running_request
  running_request = request
  local ok, err = coroutine.resume(co)
  running_request = previous
  if not ok then
    self:respond(request, { code = INTERNAL_ERROR, message = tostring(err) }, nil)
  end
end

--- @private
function Rpc:on_exit(code, signal)
  self.closing = true
  local inflight = self.inflight
  self.inflight = {}
  for _, request in pairs(inflight) do
    request.replied = true -- the server is gone: there is nobody to reply to
    run_cancel_callbacks(request, 'exited')
  end
  M.last_exit = { code = code, signal = signal, stderr = table.concat(self.stderr_tail) }
  self.dispatchers.on_exit(0, 0) -- see the module docstring: the real status is in M.last_exit
end

--- A `cmd` function for |vim.lsp.start()|: starts `cmd` and returns a
--- |vim.lsp.rpc.PublicClient| speaking to it.
--- @param cmd string[]
--- @param spawn? {cwd?: string, env?: table<string,string>}
--- @return fun(dispatchers: vim.lsp.rpc.Dispatchers): vim.lsp.rpc.PublicClient
function M.factory(cmd, spawn)
  spawn = spawn or {}
  return function(dispatchers)
    local self = setmetatable({
      dispatchers = dispatchers,
      next_id = 0,
      callbacks = {},
      reply_callbacks = {},
      inflight = {},
      decode = framing.decoder(),
      closing = false,
      stderr_tail = {},
    }, Rpc)
    local ok, proc = pcall(vim.system, cmd, {
      stdin = true,
      stdout = function(err, chunk)
        self:on_stdout(err, chunk)
      end,
      stderr = function(_, chunk)
        -- The server logs only to stderr; its last lines explain a failed start.
        table.insert(self.stderr_tail, chunk)
        if #self.stderr_tail > 20 then
          table.remove(self.stderr_tail, 1)
        end
      end,
      cwd = spawn.cwd,
      env = spawn.env,
    }, function(obj)
      vim.schedule(function()
        self:on_exit(obj.code, obj.signal)
      end)
    end)
    if not ok then
      error(('askbridge: cannot start %s: %s'):format(vim.inspect(cmd), proc))
    end
    self.proc = proc
    return {
      request = function(...)
        return self:request(...)
      end,
      notify = function(...)
        return self:notify(...)
      end,
      is_closing = function()
        return self:is_closing()
      end,
      terminate = function()
        self:terminate()
      end,
    }
  end
end

return M
