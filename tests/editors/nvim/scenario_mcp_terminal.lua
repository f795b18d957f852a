-- test_nvim_mcp.py in a real terminal: the builtin picker shows the cards of
-- an MCP agent's approval_prompt calls; the test reads the screen and types
-- the choices. The feedback text after "Give feedback…" is typed by the
-- scripted vim.ui.input. The test says when it is done.
return function(H)
  H.setup()
  H.use_builtin_select()
  H.on_input(H.type('Also add an index'))
  H.mark('ready')
  H.await_mark('done', 60000)
end
