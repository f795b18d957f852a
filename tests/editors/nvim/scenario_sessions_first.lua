-- The first Neovim of test_nvim_sessions.py: a timed question left unanswered
-- (the picker never answers; the countdown ends it: pending), then a second,
-- empty session. Both stay in the data directory when Neovim quits.
return function(H)
  H.setup()
  local first = H.new_session()
  H.on_select(function() end) -- an asynchronous picker the user ignores
  local turn = H.prompt('pick a database')
  H.wait('the turn to end', function()
    return turn.done
  end, 15000)
  H.wait('the question to be continued', function()
    return #require('askbridge').pending() == 1
  end)
  local second = H.new_session()
  H.result.sessions = { first, second }
  H.result.session_id = first
end
