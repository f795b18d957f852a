-- A blocking ask shown in a floating window (an asynchronous picker); the
-- session is cancelled while it is open: the server's $/cancelRequest must
-- close the window, and the picker's late choice must be ignored.
return function(H)
  H.setup()
  H.new_session()
  local picker = {}
  H.on_select(H.float_picker(picker))
  local turn = H.prompt('pick a database')
  H.wait('the picker to open', function()
    return picker.win ~= nil
  end)
  vim.cmd('AskbridgeCancel')
  H.wait('the picker window to close', function()
    return picker.closed_at ~= nil
  end)
  H.wait('the turn to end', function()
    return turn.done
  end)
  -- The picker did not notice and answers anyway: dropped without error.
  picker.on_choice(picker.items[1])
  vim.wait(300)
  H.result.picker_closed = picker.closed_at ~= nil
  H.result.win_valid_after = vim.api.nvim_win_is_valid(picker.win)
  H.result.stop_reason = turn.stop_reason
end
