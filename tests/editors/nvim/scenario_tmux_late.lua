-- In a real terminal (tests/editors/test_nvim_tmux.py): a timed question on
-- the builtin picker. The test waits for the mark "timed_out" (the countdown
-- reached zero while the picker waits), then types "2" Enter in the terminal.
return function(H)
  H.setup()
  H.new_session()
  H.use_builtin_select()
  H.when(function()
    return #H.result.prompts >= 1
  end, function()
    H.mark('prompt')
  end)
  H.when(H.prompt_closed(), function()
    H.mark('timed_out')
  end)
  local turn = H.prompt('pick a database')
  H.wait('the late reply to be answered', H.answered(), 30000)
  H.wait('the inbox turn to end', H.inbox_turn_ended())
  H.result.stop_reason = turn.stop_reason
  H.mark('done')
end
