-- Two sessions ask at the same moment, on the builtin (blocking) picker: the
-- second question must wait until the first is answered (one card on screen
-- at a time), not open a second inputlist inside the first one.
return function(H)
  H.setup()
  local a = H.new_session()
  local b = H.new_session()
  H.result.sessions = { a, b }
  H.use_builtin_select()
  H.type_when(function()
    return #H.result.prompts >= 1
  end, '1<CR>')
  H.type_when(function()
    return #H.result.prompts >= 2
  end, '2<CR>')
  local done = 0
  for _, id in ipairs({ a, b }) do
    require('askbridge').prompt('pick a database', function()
      done = done + 1
    end, id)
  end
  H.wait('both turns to end', function()
    return done == 2
  end)
end
