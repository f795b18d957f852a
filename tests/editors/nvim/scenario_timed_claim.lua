-- A timed ask (server timeout 2 s): the plugin claims the wait, the user takes
-- more time (the "More time" entry, then :AskbridgeMoreTime) and answers ~3 s
-- later, past the host deadline.
return function(H)
  H.setup()
  H.new_session()
  H.on_select(H.pick('more_time'))
  H.on_select(function(items, _, on_choice)
    vim.cmd('AskbridgeMoreTime')
    H.result.status_after_more_time = require('askbridge').status()
    vim.defer_fn(function()
      H.result.answered_at_ms = H.now_ms()
      H.pick('option', 'SQLite')(items, nil, on_choice)
    end, 3000)
  end)
  local turn = H.prompt('pick a database')
  H.wait('the turn to end', function()
    return turn.done
  end, 15000)
  H.result.stop_reason = turn.stop_reason
  H.result.status_after = require('askbridge').status()
end
