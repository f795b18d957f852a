-- One batch: multi-select with two options and "Other…", a single-select
-- answered with free text, a skipped question, a question without options.
return function(H)
  H.setup()
  vim.cmd('AskbridgeNew')
  H.wait(':AskbridgeNew', function()
    return require('askbridge').current_session() ~= nil
  end)
  H.result.session_id = require('askbridge').current_session()
  -- langs (multi-select)
  H.on_select(H.pick('option', 'Python'))
  H.on_select(H.pick('option', 'Go'))
  H.on_select(H.pick('option', 'Lua'))
  H.on_select(H.pick('option', 'Lua')) -- unchecks Lua again
  H.on_select(H.pick('other'))
  H.on_input(H.type('Rust'))
  H.on_select(H.pick('done'))
  -- name (single-select): Other… escaped once, then typed
  H.on_select(H.pick('other'))
  H.on_input(H.type(nil))
  H.on_select(H.pick('other'))
  H.on_input(H.type('askbridge'))
  -- color: skipped
  H.on_select(H.pick('skip'))
  -- notes: no options
  H.on_input(H.type('see README'))
  vim.cmd('AskbridgePrompt configure the project')
  H.wait('the turn to end', function()
    for _, ev in ipairs(H.events('AskbridgeSessionUpdate')) do
      if ev.data.update.sessionUpdate == 'turn_ended' then
        H.result.stop_reason = ev.data.update.stopReason
        return true
      end
    end
    return false
  end)
end
