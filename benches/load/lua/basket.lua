-- Complete one-line baskets with their payment at one store (scenario e). Run with as many
-- threads as connections (-tN -cN): each thread then owns one connection, and request()/response()
-- alternate, so a per-thread state machine can chain the three writes of a sale:
--   1. POST /basket      one line, quantity 1            -> basket id and total
--   2. POST /transaction completed CARD payment = total
--   3. PUT  /basket      {"id": ..., "completed": true}  -> counted as a completed sale
-- A non-201 answer at any step counts as an error and restarts the machine at step 1.
-- args: DATAFILE ; DATAFILE line: TOKEN <tab> STORE_ID <tab> PRODUCT_ID
local C = dofile(os.getenv("BENCH_LUA_DIR") .. "/common.lua")
setup = C.setup

local h, store, product
local step, basket, total = 1, nil, nil
completed, errors, e_basket, e_transaction, e_complete, parse_errors = 0, 0, 0, 0, 0, 0

function init(args)
   local f = C.split(C.read_lines(args[1])[1], "\t")
   h = C.api_headers(f[1])
   h["Content-Type"] = "application/json"
   store, product = f[2], f[3]
end

function request()
   if step == 1 then
      return wrk.format("POST", "/basket", h, string.format(
         '{"baskets":{"b":{"storeId":%s,"basketProducts":{"l":{"productId":%s,"quantity":1}}}}}',
         store, product))
   elseif step == 2 then
      return wrk.format("POST", "/transaction", h, string.format(
         '{"transactions":{"t":{"basketId":%s,"type":"CARD","amount":%s,"completed":true}}}',
         basket, total))
   else
      return wrk.format("PUT", "/basket", h, string.format(
         '{"baskets":{"c":{"id":%s,"completed":true}}}', basket))
   end
end

function response(status, headers, body)
   if status ~= 201 then
      errors = errors + 1
      if step == 1 then e_basket = e_basket + 1 elseif step == 2 then e_transaction = e_transaction + 1
      else e_complete = e_complete + 1 end
      step = 1
      return
   end
   if step == 1 then
      local record = string.match(body, '"baskets"%s*:%s*{%s*"b"%s*:%s*(%b{})')
      -- Top-level fields only: drop the nested objects (lines) before looking for id and total.
      local top = record and string.gsub(string.sub(record, 2, -2), "%b{}", "{}")
      basket = top and string.match(top, '"id"%s*:%s*(%d+)')
      local t = top and string.match(top, '"total"%s*:%s*"([%d%.%-]+)"')
      -- With the sale engine the amount due is the receipt's total (discounts, tax added on).
      local receipt = string.match(record, '"receipt"%s*:%s*(%b{})')
      if receipt then
         local flat = string.gsub(string.gsub(string.sub(receipt, 2, -2), "%b[]", "[]"), "%b{}", "{}")
         t = string.match(flat, '"total"%s*:%s*(%-?%d+)') or t
      end
      if not (basket and t) then
         parse_errors = parse_errors + 1
         errors = errors + 1
         return
      end
      -- Amounts are integer minor units; a fractional total is paid rounded up.
      total = tostring(math.ceil(tonumber(t)))
      step = 2
   elseif step == 2 then
      step = 3
   else
      completed = completed + 1
      step = 1
   end
end

function done(summary, latency, requests)
   C.report({ "completed", "errors", "e_basket", "e_transaction", "e_complete", "parse_errors" })
end
