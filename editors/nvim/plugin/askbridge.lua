-- askbridge user commands. They load the plugin lazily; setup{} is optional
-- (without it the defaults apply: `askbridge serve` from $PATH). See :help askbridge.
if vim.g.loaded_askbridge then
  return
end
vim.g.loaded_askbridge = true
if not require('askbridge.version').supported() then
  require('askbridge.version').tell()
  return
end

local function askbridge()
  return require('askbridge')
end

local command = vim.api.nvim_create_user_command

command('AskbridgeNew', function()
  askbridge().new_session()
end, { desc = 'askbridge: start a new agent session' })

command('AskbridgePrompt', function(args)
  askbridge().prompt(args.args)
end, { nargs = '+', desc = 'askbridge: send a prompt to the current session' })

command('AskbridgeCancel', function()
  if not askbridge().cancel() then
    require('askbridge.notify').warn('no session to cancel')
  end
end, { desc = "askbridge: cancel the current session's turn" })

command('AskbridgeSessions', function()
  askbridge().sessions()
end, { desc = 'askbridge: list the stored sessions and load one' })

command('AskbridgePending', function()
  askbridge().show_pending()
end, { desc = 'askbridge: list questions that are still answerable' })

command('AskbridgeAnswer', function(args)
  askbridge().answer(args.args ~= '' and args.args or nil)
end, {
  nargs = '?',
  desc = 'askbridge: answer a continued question late',
  complete = function()
    return vim.tbl_map(function(entry)
      return entry.call_id
    end, require('askbridge').pending())
  end,
})

command('AskbridgeMoreTime', function()
  if askbridge().more_time() == 0 then
    require('askbridge.notify').info('no timed question is counting down')
  end
end, { desc = 'askbridge: take more time on the timed question on screen' })

command('AskbridgeStop', function()
  askbridge().stop()
end, { desc = 'askbridge: stop the server' })
