-- In a real terminal (tests/editors/test_nvim_tmux.py): a timed multi-select
-- question on the builtin picker, with askbridge's status in the statusline.
-- The test waits for the mark "timed_out", toggles options and picks Done in the
-- terminal; once the late reply is settled and its inbox turn ended, the
-- scenario marks "settled" and keeps Neovim on screen until the test marks
-- "seen" (it reads the statusline meanwhile).
return function(H)
  H.setup()
  vim.o.laststatus = 2
  vim.o.statusline = "[%{v:lua.require('askbridge').status()}]"
  H.new_session()
  H.use_builtin_select()
  H.when(H.prompt_closed(), function()
    H.mark('timed_out')
  end)
  local turn = H.prompt('pick languages')
  H.wait('the late reply to be answered', H.answered(), 30000)
  H.wait('the inbox turn to end', H.inbox_turn_ended())
  H.result.stop_reason = turn.stop_reason
  H.mark('settled')
  H.wait('the test to read the screen', function()
    return H.marked('seen') ~= nil
  end, 30000)
end
