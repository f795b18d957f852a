-- Window A of test_nvim_windows.py: creates the session, waits until window B
-- has loaded it, then prompts. The question shows here in a floating picker
-- the user leaves alone (mark "shown"); B answers it, and the server
-- withdraws it here: the window closes and the user is told why.
return function(H)
  H.setup()
  local session_id = H.new_session()
  H.mark('session', session_id)
  H.await_mark('loaded')
  local picker = {}
  H.on_select(H.float_picker(picker))
  local turn = H.prompt('pick a database')
  H.wait('the picker to open', function()
    return picker.win ~= nil
  end)
  H.mark('shown')
  H.wait('the picker window to close', function()
    return picker.closed_at ~= nil
  end, 30000)
  H.wait('the turn to end', function()
    return turn.done
  end)
  H.wait('the question to settle here too', H.in_state(session_id, 'call-1', 'settled'))
  H.wait('the user to be told', function()
    return #H.result.notes > 0
  end)
  H.result.picker_closed = true
  H.result.win_valid_after = vim.api.nvim_win_is_valid(picker.win)
  H.result.stop_reason = turn.stop_reason
end
