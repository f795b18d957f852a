-- test_nvim_mcp.py: the cards of an MCP agent's approval_prompt calls (X5), in
-- order: a Bash command allowed, one denied, a plan approved, a plan sent back
-- with feedback typed after "Give feedback…". The test says when it is done.
return function(H)
  H.setup()
  H.on_select(H.pick('option', 'Allow'))
  H.on_select(H.pick('option', 'Deny'))
  H.on_select(H.pick('option', 'Approve plan'))
  H.on_select(H.pick('other'))
  H.on_input(H.type('Also add an index'))
  H.mark('ready')
  H.await_mark('done', 60000)
end
