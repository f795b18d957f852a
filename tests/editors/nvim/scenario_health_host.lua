-- test_nvim_health.py: :checkhealth askbridge before any host runs (setup has
-- autostart = false); then, once the test started a host of another version
-- (mark "host"), the plugin starts its server, which that host refuses (H7),
-- and :checkhealth askbridge again.
return function(H)
  H.start_plugin()
  vim.cmd('silent checkhealth askbridge')
  H.result.health_before = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  H.mark('checked')
  H.await_mark('host')
  local client_mod = require('askbridge.client')
  local _, err = client_mod.start()
  assert(not err, err)
  H.wait('the server to exit', function()
    return client_mod.exit_code ~= nil
  end)
  vim.cmd('silent checkhealth askbridge')
  H.result.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
end
