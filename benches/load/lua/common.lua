-- Shared helpers for the merchantd wrk scripts (loaded with dofile from each scenario script).
-- Data files are written by load.py: one record a line, fields separated by tabs.

local M = {}

function M.read_lines(path)
   local lines = {}
   local f = assert(io.open(path, "r"), "cannot open " .. tostring(path))
   for line in f:lines() do
      if line ~= "" then lines[#lines + 1] = line end
   end
   f:close()
   return lines
end

function M.split(s, sep)
   local out = {}
   for field in string.gmatch(s, "([^" .. sep .. "]+)") do out[#out + 1] = field end
   return out
end

-- `n` distinct random items of `list` (n <= #list), joined with commas.
function M.sample_csv(list, n)
   local picked, seen = {}, {}
   while #picked < n and #picked < #list do
      local i = math.random(#list)
      if not seen[i] then
         seen[i] = true
         picked[#picked + 1] = list[i]
      end
   end
   return table.concat(picked, ",")
end

function M.api_headers(token)
   return {
      ["Authorization"] = "Bearer " .. token,
      ["x-accept-version"] = "2.0",
   }
end

-- setup()/done() plumbing: every thread gets an id; done() sums numeric counters over threads.
M.threads = {}

function M.setup(thread)
   M.threads[#M.threads + 1] = thread
   thread:set("thread_id", #M.threads)
end

function M.sum(name)
   local total = 0
   for _, t in ipairs(M.threads) do
      total = total + (tonumber(t:get(name)) or 0)
   end
   return total
end

-- done() prints "BENCH key=value" lines that load.py parses.
function M.report(names)
   for _, name in ipairs(names) do
      io.write(string.format("BENCH %s=%d\n", name, M.sum(name)))
   end
end

return M
