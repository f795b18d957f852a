-- A blocking ask answered with an option, then a second ask dismissed
-- (ASK_CANCELLED); :checkhealth, then :AskbridgeStop.
return function(H)
  H.setup()
  H.new_session()
  local pick = H.pick('option', 'Postgres')
  H.on_select(function(...)
    -- what the agent said before asking was shown before the question
    H.result.notes_at_first_pick = vim.deepcopy(H.result.notes)
    return pick(...)
  end)
  H.on_select(function(_, _, on_choice)
    on_choice(nil) -- the user presses <Esc>
  end)
  local turn = H.prompt('pick a database')
  H.wait('the turn to end', function()
    return turn.done
  end)
  H.result.stop_reason = turn.stop_reason
  vim.cmd('silent checkhealth askbridge')
  H.result.health = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  vim.cmd('AskbridgeStop')
  local client_mod = require('askbridge.client')
  H.wait('the server to stop', function()
    return client_mod.exit_code ~= nil
  end)
  H.result.stopped_exit_code = client_mod.exit_code
end
