-- Window B of test_nvim_windows.py: loads window A's session (mark "session")
-- with :AskbridgeSessions (mark "loaded"); once A shows the question (mark
-- "shown"), the user answers it here with Postgres.
return function(H)
  H.setup()
  local session_id = H.await_mark('session')
  H.result.session_id = session_id
  H.load_through_sessions(session_id)
  H.on_select(function(items, opts, on_choice)
    H.when(function()
      return H.marked('shown') ~= nil
    end, function()
      H.pick('option', 'Postgres')(items, opts, on_choice)
    end)
  end)
  H.mark('loaded')
  H.wait('the question to settle', H.in_state(session_id, 'call-1', 'settled'), 30000)
end
