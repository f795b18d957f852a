-- protocol/transcripts/multi-select-custom.json against the plugin: the user
-- checks Python and Rust, adds custom text through "Other…", submits, then
-- types the answer of the question without options.
local here = vim.fs.dirname(debug.getinfo(1, 'S').source:sub(2))
local T = dofile(here .. '/transcript_driver.lua')

return function(H)
  T.start(H)
  H.on_select(H.pick('option', 'Python'))
  H.on_select(H.pick('option', 'Rust'))
  H.on_select(H.pick('other'))
  H.on_input(H.type('plus a little Zig'))
  H.on_select(H.pick('done'))
  H.on_input(H.type('orders-api'))
  T.prompt_turn(H, 'Plan the stack')
end
