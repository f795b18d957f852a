--- How a question with an intent (behavior.md V3) is laid out. An intent
--- changes the presentation only, never the answer: the answer is still the
--- chosen option's label (or `custom` text).
---
---   approval     `{kind, approve, reject, always?, subject?: {name}}` — an
---                approval card: the subject's name with the question, the
---                detail (the command or edit, markdown) in the prompt, and
---                exactly the choices Allow (`approve`), Always (`always`,
---                when given) and Deny (`reject`) — no Other, no Skip.
---   plan-review  `{kind, approve}` — the plan (detail, markdown) in the
---                prompt, then Approve (the `approve` label), the other
---                option(s), and "Give feedback…" (free text, sent as `custom`).
---
--- The detail goes in the picker's prompt (not a floating window): it is the
--- one place every picker shows, the builtin inputlist included, where a
--- float would be hidden behind the list. `opts.kind` is "askbridge.approval"
--- or "askbridge.plan_review" and `opts.askbridge.question.intent` the intent,
--- for a picker that wants to render the markdown itself.
--- An unknown kind, or an intent whose labels do not match the options, is
--- shown as a plain question (the server validates intents: A5).

local M = {}

local function option_named(question, label)
  for _, option in ipairs(question.options or {}) do
    if option.label == label then
      return option
    end
  end
  return nil
end

local function option_item(question, label)
  local option = option_named(question, label)
  return option and { kind = 'option', label = option.label, description = option.description }
end

--- The layout of an approval question, or nil when the intent does not fit its options.
local function approval(question, intent)
  local labels = { intent.approve, intent.always, intent.reject }
  local items = {}
  for i = 1, 3 do
    if labels[i] ~= nil then
      local item = option_item(question, labels[i])
      if not item then
        return nil
      end
      table.insert(items, item)
    end
  end
  local title = question.question
  if type(intent.subject) == 'table' and type(intent.subject.name) == 'string' then
    title = ('%s: %s'):format(intent.subject.name, title)
  end
  return {
    options = items,
    title = title,
    free_text = false,
    skip = false,
    kind = 'askbridge.approval',
  }
end

local function plan_review(question, intent)
  local first = option_item(question, intent.approve)
  if not first then
    return nil
  end
  local items = { first }
  for _, option in ipairs(question.options or {}) do
    if option.label ~= intent.approve then
      table.insert(items, option_item(question, option.label))
    end
  end
  return {
    options = items,
    title = question.question,
    free_text = true,
    other = 'Give feedback… (type what to change)',
    skip = false,
    kind = 'askbridge.plan_review',
  }
end

--- The layout of a single-select question with an intent, or nil (a plain question).
--- @return {options: table[], title: string, free_text: boolean, other: string?,
---   skip: boolean, kind: string}?
function M.layout(question)
  local intent = question.intent
  if type(intent) ~= 'table' or question.multiSelect then
    return nil
  elseif intent.kind == 'approval' then
    return approval(question, intent)
  elseif intent.kind == 'plan-review' then
    return plan_review(question, intent)
  end
  return nil
end

return M
