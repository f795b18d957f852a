-- The server cannot start (its data directory is locked by the test): the
-- user is told why, and :checkhealth shows it.
return function(H)
  H.start_plugin()
  local client_mod = require('askbridge.client')
  H.wait('the server to exit', function()
    return client_mod.exit_code ~= nil
  end)
  vim.cmd('silent checkhealth askbridge')
  H.result.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end
