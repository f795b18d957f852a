-- Messages are said once, with one "askbridge: " prefix: a server that exits
-- at start (one error with its stderr; no second "exited" from the waiting
-- command, no vim.lsp "quit with exit code" warning), a server command that
-- is not executable (setup's warning, then the command's error), and
-- :AskbridgeStop with no server running.
return function(H)
  H.start_plugin({ autostart = false })
  local client_mod = require('askbridge.client')
  local failed
  require('askbridge').prompt('hello', function(err)
    failed = err or 'no error'
  end)
  H.wait('the prompt to fail', function()
    return failed ~= nil and client_mod.exit_code ~= nil
  end)
  require('askbridge.notify').report(failed) -- what :AskbridgePrompt does with it
  vim.wait(300) -- vim.lsp schedules its own exit message
  H.result.after_exit = #H.result.notes
  require('askbridge').setup({ cmd = { '/nonexistent/askbridge', 'serve' } })
  vim.cmd('AskbridgePrompt again')
  vim.wait(100)
  vim.cmd('AskbridgeStop')
  -- Issue 18 item 7: a bare name missing from PATH is not "not executable".
  local plain = vim.fn.tempname()
  vim.fn.writefile({ 'x' }, plain) -- there, but not executable
  H.result.why = {
    bare = client_mod.why_unusable('askbridge-not-installed-anywhere'),
    missing = client_mod.why_unusable('/nonexistent/askbridge'),
    plain = client_mod.why_unusable(plain),
    plain_path = plain,
  }
end
