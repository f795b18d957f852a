-- The builtin, blocking vim.ui.select on a timed question; while it waits for
-- the user, the turn is cancelled (from a timer: typing goes to the picker),
-- so the server withdraws the request ($/cancelRequest). The picker cannot be
-- closed from code; the user then picks an option. Nothing may send an error:
-- the transport answered -32800, and the choice goes as a late reply, which the
-- server refuses (false: the question went with its turn) — the user is told.
return function(H)
  H.setup()
  H.new_session()
  H.use_builtin_select()
  H.when(function()
    return #H.result.prompts >= 1
  end, function()
    H.result.cancelled_at_ms = H.now_ms()
    require('askbridge').cancel()
  end)
  H.type_when(H.prompt_closed(), '2<CR>')
  local turn = H.prompt('pick a database')
  H.wait('the turn to end', function()
    return turn.done
  end)
  H.result.stop_reason = turn.stop_reason
  H.wait('the late reply to be answered', H.answered())
end
