-- Run with -c after start-up (the project file has run): waits for the server
-- the project's setup{autostart = true} started, records the options in force
-- and the messages, stops the server and quits.
local client_mod = require('askbridge.client')
local config = require('askbridge.config')
local result = {}
local ok, err = pcall(function()
  result.initialized = vim.wait(20000, function()
    local client = client_mod.get()
    return client ~= nil and client.initialized == true
  end, 20)
  result.options = {
    cmd = config.options.cmd,
    data_dir = config.options.data_dir,
    cmd_env = config.options.cmd_env or vim.NIL,
    cmd_cwd = config.options.cmd_cwd or vim.NIL,
    model = config.options.model or vim.NIL,
    more_time_seconds = config.options.more_time_seconds,
  }
  if client_mod.stop() then
    vim.wait(10000, function()
      return client_mod.get() == nil
    end, 20)
  end
end)
if not ok then
  result.error = tostring(err)
end
result.notes = _G.askbridge_notes
local file = assert(io.open(assert(os.getenv('ASKBRIDGE_TEST_RESULT')), 'w'))
file:write(vim.json.encode(result))
file:close()
vim.cmd('qa!')
