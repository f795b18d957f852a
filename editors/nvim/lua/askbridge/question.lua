--- Renders one question of a card with vim.ui.select / vim.ui.input and
--- returns its answer item (behavior.md V4): `{id, selected = {labels}, custom?}`.
---
--- The items given to vim.ui.select are tables with a `kind`, so a vim.ui
--- override (or a test) can act on them without parsing text:
---   {kind = "option", index, label, description?, checked?}  an offered option
---   {kind = "other", custom?}   free text ("Other…"), opens vim.ui.input
---   {kind = "done"}             multi-select only: submit the checked options
---   {kind = "skip"}             answer nothing for this question (V4 "skipped");
---                               only in a batch of several questions
---   {kind = "more_time"}        timed cards only: extend the local countdown
--- Entries are not numbered here: the builtin picker numbers them itself.
--- `opts.kind` is "askbridge.question" ("askbridge.approval" /
--- "askbridge.plan_review" for intents, intents.lua) and `opts.askbridge`
--- carries the question and the card's ids.
---
--- Dismissing the picker (choice nil) dismisses the whole card: the caller
--- replies ASK_CANCELLED. Escaping the "Other…" input goes back to the list.
--- Questions without options are asked with vim.ui.input alone: empty text
--- skips, Esc dismisses.

local config = require('askbridge.config')
local intents = require('askbridge.intents')

local M = {}

--- "[Header] Question (2/3) (42s left)" and, under it, the detail.
--- @param card askbridge.Card
--- @param question table
--- @param position integer
--- @param title string? the question line (default: the question)
function M.prompt_text(card, question, position, title)
  title = title or question.question
  if question.header and question.header ~= '' then
    title = ('[%s] %s'):format(question.header, title)
  end
  if #card.questions > 1 then
    title = ('%s (%d/%d)'):format(title, position, #card.questions)
  end
  local left = card:seconds_left()
  if left then
    title = ('%s (%ds left)'):format(title, left)
  elseif card.late then
    title = title .. ' (no longer waiting: your answer goes as a late reply)'
  end
  if question.detail and question.detail ~= '' then
    title = title .. '\n\n' .. question.detail .. '\n'
  end
  return title
end

--- Text of one picker entry.
--- @param card askbridge.Card
--- @param multi boolean
--- @param other_text string? what the "other" entry says
function M.formatter(card, multi, other_text)
  return function(item)
    if item.kind == 'option' then
      local text = item.label
      if item.description and item.description ~= '' then
        text = text .. ' — ' .. item.description
      end
      if multi then
        text = (item.checked and '[x] ' or '[ ] ') .. text
      end
      return text
    elseif item.kind == 'other' then
      if item.custom then
        return 'Other…: ' .. item.custom
      end
      return other_text or 'Other… (type your own answer)'
    elseif item.kind == 'done' then
      return ('Done (%d selected)'):format(item.count or 0)
    elseif item.kind == 'skip' then
      return 'Skip this question'
    elseif item.kind == 'more_time' then
      return ('More time (+%ds, %ds left)'):format(
        config.options.more_time_seconds,
        card:seconds_left() or 0
      )
    end
    return tostring(item.label or item.kind)
  end
end

local function trailing_items(card, items, skip)
  if skip and #card.questions > 1 then
    table.insert(items, { kind = 'skip' })
  end
  if card.deadline then
    table.insert(items, { kind = 'more_time' })
  end
  return items
end

--- Asks for free text. Returns text (non-empty), false (empty / escaped) or nil, reason.
local function ask_custom(card, question, position)
  local text, closed = card:input({
    prompt = M.prompt_text(card, question, position) .. ' Your answer: ',
    kind = 'askbridge.custom',
  }, question)
  if closed then
    return nil, closed
  end
  if text == nil or vim.trim(text) == '' then
    return false
  end
  return text
end

local function ask_without_options(card, question, position)
  local text, closed = card:input({
    prompt = M.prompt_text(card, question, position) .. ' ',
    kind = 'askbridge.question',
  }, question)
  if closed then
    return nil, closed
  end
  if text == nil then
    return nil, 'cancelled'
  end
  if vim.trim(text) == '' then
    return { id = question.id, selected = {} }
  end
  return { id = question.id, selected = {}, custom = text }
end

local function plain_layout(question)
  local options = {}
  for _, option in ipairs(question.options) do
    table.insert(options, {
      kind = 'option',
      label = option.label,
      description = option.description,
    })
  end
  return { options = options, free_text = true, skip = true, kind = 'askbridge.question' }
end

local function ask_single(card, question, position, layout)
  while true do
    local items = {}
    for index, option in ipairs(layout.options) do
      table.insert(items, vim.tbl_extend('force', option, { index = index }))
    end
    if layout.free_text then
      table.insert(items, { kind = 'other' })
    end
    trailing_items(card, items, layout.skip)
    local choice, closed = card:select(items, {
      prompt = M.prompt_text(card, question, position, layout.title),
      format_item = M.formatter(card, false, layout.other),
      kind = layout.kind,
    }, question)
    if closed then
      return nil, closed
    elseif choice == nil then
      return nil, 'cancelled'
    elseif choice.kind == 'option' then
      return { id = question.id, selected = { choice.label } }
    elseif choice.kind == 'skip' then
      return { id = question.id, selected = {} }
    elseif choice.kind == 'more_time' then
      card:more_time()
    elseif choice.kind == 'other' then
      local text, why = ask_custom(card, question, position)
      if why then
        return nil, why
      elseif text then
        return { id = question.id, selected = {}, custom = text }
      end
    end
  end
end

local function ask_multi(card, question, position)
  local checked = {}
  local custom = nil
  while true do
    local items, count = {}, 0
    for index, option in ipairs(question.options) do
      if checked[index] then
        count = count + 1
      end
      table.insert(items, {
        kind = 'option',
        index = index,
        label = option.label,
        description = option.description,
        checked = checked[index] == true,
      })
    end
    table.insert(items, { kind = 'other', custom = custom })
    table.insert(items, { kind = 'done', count = count + (custom and 1 or 0) })
    trailing_items(card, items, true)
    local choice, closed = card:select(items, {
      prompt = M.prompt_text(card, question, position),
      format_item = M.formatter(card, true),
      kind = 'askbridge.question',
    }, question)
    if closed then
      return nil, closed
    elseif choice == nil then
      return nil, 'cancelled'
    elseif choice.kind == 'option' then
      checked[choice.index] = not checked[choice.index] or nil
    elseif choice.kind == 'skip' then
      return { id = question.id, selected = {} }
    elseif choice.kind == 'more_time' then
      card:more_time()
    elseif choice.kind == 'other' then
      local text, why = ask_custom(card, question, position)
      if why then
        return nil, why
      end
      custom = text or nil -- an empty answer clears the custom text
    elseif choice.kind == 'done' then
      local selected = {}
      for index, option in ipairs(question.options) do
        if checked[index] then
          table.insert(selected, option.label)
        end
      end
      return { id = question.id, selected = selected, custom = custom }
    end
  end
end

--- Asks one question. Returns its answer item, or `nil, reason` where reason is
--- "cancelled" (the user dismissed the card) or the card's close reason.
--- @param card askbridge.Card
--- @param question table wire QuestionItem
--- @param position integer 1-based position in the batch
function M.ask(card, question, position)
  if not question.options or #question.options == 0 then
    return ask_without_options(card, question, position)
  elseif question.multiSelect then
    return ask_multi(card, question, position)
  end
  return ask_single(card, question, position, intents.layout(question) or plain_layout(question))
end

--- Asks every question of the card in turn, once the card has the screen
--- (screen.lua). Returns the answer items, or `nil, reason` as M.ask.
--- @param card askbridge.Card
function M.ask_all(card)
  local ok, why = require('askbridge.screen').take(card)
  if not ok then
    return nil, why
  end
  local answers = {}
  for position, question in ipairs(card.questions) do
    local item, reason = M.ask(card, question, position)
    if not item then
      return nil, reason
    end
    table.insert(answers, item)
  end
  return answers
end

return M
