-- keyhost's standard transferable token: cash. Issue it with
--   keyhost token issue --program stdlib/keyhost/cash.lua --value 100 --unit EUR-cent --to HOLDER …
-- It moves only by payment or deposit, to the key it is asked to, and records each move; running
-- it for anything else is refused, so a holder cannot burn it by accident.
local t = ...
if not t.transfer_to then
  error("cash: this token moves only by payment or deposit ('keyhost token pay', 'keyhost token deposit')", 0)
end
t.transfer(t.transfer_to)
t.emit {
  kind = "transfer",
  to = t.hex.encode(t.transfer_to),
  value = t.token.value,
  unit = t.token.unit,
  hop = t.hops + 1,
}
