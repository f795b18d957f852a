-- A timed ask (server timeout 2 s) left unanswered: the local countdown ends
-- it (pending), the question shows up as continued, :AskbridgePending lists it
-- and :AskbridgeAnswer sends a late reply that wakes the agent.
return function(H)
  H.setup()
  local session_id = H.new_session()
  local picker = {}
  H.on_select(H.float_picker(picker))
  local turn = H.prompt('pick a database')
  H.wait('the first turn to end', function()
    return turn.done
  end, 15000)
  H.result.stop_reason = turn.stop_reason
  H.result.picker_win_valid = vim.api.nvim_win_is_valid(picker.win)
  H.wait('the question to be continued', function()
    return #require('askbridge').pending() == 1
  end)
  H.result.pending = require('askbridge').pending()
  vim.cmd('AskbridgePending')
  H.wait(':AskbridgePending to list it', function()
    return #H.result.notes > 1
  end)
  H.on_select(H.pick('option', 'Postgres'))
  vim.cmd('AskbridgeAnswer')
  H.wait('the late reply to be accepted', H.answered())
  H.wait('the inbox turn to end', H.inbox_turn_ended())
  H.wait('the question to be settled', function()
    return #require('askbridge').pending() == 0
  end)
  H.result.pending_after = #require('askbridge').pending()
  H.result.session_checked = session_id
end
