-- A blocking ask shown in a floating window (an asynchronous picker); the
-- session is cancelled while it is open: the server's $/cancelRequest must
-- close the window, and the picker's late choice must be ignored.
return function(H)
  H.setup()
  H.new_session()
  local picker = {}
  H.on_select(function(items, _, on_choice)
    local buf = vim.api.nvim_create_buf(false, true)
    picker.win = vim.api.nvim_open_win(buf, true, {
      relative = 'editor',
      row = 1,
      col = 1,
      width = 30,
      height = #items,
      style = 'minimal',
    })
    picker.items, picker.on_choice = items, on_choice
    vim.api.nvim_create_autocmd('WinClosed', {
      pattern = tostring(picker.win),
      once = true,
      callback = function()
        picker.closed_at = H.now_ms()
      end,
    })
  end)
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
