-- Window A of test_nvim_windows.py's terminal test, in a real terminal with the
-- builtin, blocking picker: creates the session, waits until window B has
-- loaded it, prompts (mark "shown" once the list is up). B answers first; the
-- list here cannot be closed from code (mark "withdrawn"), so the test types
-- 1 Enter into it: that choice goes as a late reply, which the server refuses.
return function(H)
  H.setup()
  local session_id = H.new_session()
  H.mark('session', session_id)
  H.await_mark('loaded')
  H.use_builtin_select()
  H.when(function()
    return #H.result.prompts >= 1
  end, function()
    H.mark('shown')
  end)
  H.when(H.prompt_closed(), function()
    H.mark('withdrawn')
  end)
  local turn = H.prompt('pick a database')
  H.wait('the late reply to be answered', H.answered(), 30000)
  H.wait('the turn to end', function()
    return turn.done
  end)
  H.wait('the user to be told', function()
    return #H.result.notes > 0
  end)
  H.result.stop_reason = turn.stop_reason
  H.mark('done')
end
