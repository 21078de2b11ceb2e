-- jitunwind.lua - the policy half of the LuaJIT module `jitunwind`: which
-- trace events publish and unpublish what, and the names and line rows
-- people see.  jitunwind.c compiles this text into the module and runs it
-- with `core`, its table of C functions (publish, unpublish, ...).
--
-- What stock LuaJIT 2.1 tells a Lua program about its traces, and what this
-- file makes of it:
--   jit.attach(fn, "trace")  start (tr, func, pc, parent, exit), stop (tr,
--                            func), abort (tr, ...), flush (): publish at
--                            stop, unpublish everything at flush
--   jit.util.tracemc(tr)     the code, its address, the loop offset
--   jit.util.funcinfo(f, pc) source, linedefined, currentline: the name
--   jit.util.traceir(tr, 0)  nothing once the trace is freed: the sweep
-- There is no event when one trace is flushed (jit.flush(tr), jit.flush(f),
-- jit.off(f)) or freed by the GC, so those three functions are wrapped, and
-- each stop sweeps away traces the GC freed.
local core = ...

local jit = require "jit"
local ffi = require "ffi"
local jutil = require "jit.util"

-- traceframe.c reads the x86-64 GC64 code of LuaJIT 2.1 (vm_x64.dasc).
if jit.arch ~= "x64" or jit.os ~= "Linux" or not ffi.abi("gc64") or jit.version_num < 20100 then
  error(string.format("jitunwind: LuaJIT 2.1 on x64 Linux with GC64 is supported; this is %s on %s %s%s",
    jit.version, jit.os, jit.arch, ffi.abi("gc64") and "" or " without GC64"), 0)
end

local tracemc, traceir, funcinfo = jutil.tracemc, jutil.traceir, jutil.funcinfo
local now = core.now

local M = { version = "0.1" }
local started = {}   -- tr -> {func, pc, parent} while it records
local live = {}      -- tr -> {parent, name, source, line} while it is published
-- tr -> the prototype the trace starts in, held weakly: a strong reference
-- would keep the prototype, and so its traces, alive for ever.
local protos = setmetatable({}, { __mode = "v" })
local handler_ns, handler_ns_max, events, failed_names = 0, 0, 0, 0

-- ---- names -----------------------------------------------------------------

-- The lines of a chunk, read once: a file's ("@path"), or the text of a
-- chunk loaded from a string; none for "=name" chunks.
local chunk_lines = {}
local function lines_of(source)
  local lines = chunk_lines[source]
  if lines ~= nil then return lines end
  local text
  local kind = source:sub(1, 1)
  if kind == "@" then
    local f = io.open(source:sub(2), "rb")
    if f then text = f:read("*a"); f:close() end
  elseif kind ~= "=" then
    text = source
  end
  lines = false
  if text then
    lines = {}
    for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  end
  chunk_lines[source] = lines
  return lines
end

-- The name a function's definition gives it, from the line it starts on:
-- `function a.b:c(`, `local function f(`, `x.y = function(`, `["k"] = function(`.
local function declared_name(line)
  return line:match("^%s*local%s+function%s+([%w_]+)")
      or line:match("^%s*function%s+([%w_%.:]+)")
      or line:match("([%w_][%w_%.]*)%s*=%s*function%f[^%w_]")
      or line:match("%[%s*[\"']([%w_]+)[\"']%s*%]%s*=%s*function%f[^%w_]")
end

-- A chunk as people know it: a file's path, an "=name", or the start of a
-- string chunk as Lua's own messages show it ([string "..."]).  A path is
-- cut to its last 400 bytes (names stay under JU_NAME_MAX).
local function chunk_label(source)
  local kind = source:sub(1, 1)
  if kind == "@" or kind == "=" then
    local label = source:sub(2)
    return #label > 400 and "..." .. label:sub(-400) or label
  end
  local first = source:match("^[^\n]*")
  if #first > 40 or first ~= source then first = first:sub(1, 37) .. "..." end
  return '[string "' .. first .. '"]'
end

-- "lua:FUNC@CHUNK:LINE (trace N)": FUNC as the source declares it, <main>
-- for a chunk's body, <anon:DEFLINE> for a function without a name; LINE
-- where the trace starts.
local function trace_name(tr, info)
  local func
  if info.linedefined == 0 then
    func = "<main>"
  else
    local lines = lines_of(info.source)
    func = lines and lines[info.linedefined] and declared_name(lines[info.linedefined])
    if not func then func = "<anon:" .. info.linedefined .. ">" end
  end
  local name = string.format("lua:%s@%s:%d (trace %d)", func, chunk_label(info.source), info.currentline, tr)
  -- libjitunwind takes no control characters (perf map lines, ELF strings)
  return (name:gsub("%c", "?"))
end

-- The file debuggers show lines of: a file chunk's path; nothing otherwise.
local function line_file(info)
  if info.source:sub(1, 1) == "@" then return info.source:sub(2) end
end

-- ---- the events --------------------------------------------------------------

-- Unpublish the traces in `dead` (a set), in one batch.
local function kill(dead)
  local list = {}
  for tr in pairs(dead) do
    if live[tr] then list[#list + 1] = tr; live[tr] = nil; protos[tr] = nil end
  end
  if #list > 0 then core.unpublish(list) end
end

-- The traces the GC freed: traceir answers nothing for a free number.
local function sweep()
  local dead
  for tr in pairs(live) do
    if traceir(tr, 0) == nil then
      dead = dead or {}
      dead[tr] = true
    end
  end
  if dead then kill(dead) end
end

local function publish(tr, rec)
  local code, addr = tracemc(tr)
  if not code then return end
  local info = funcinfo(rec.func, rec.pc)
  local name = trace_name(tr, info)
  local ok = core.publish(tr, rec.parent, addr, #code, name, line_file(info), info.currentline)
  if not ok then
    -- a name libjitunwind refused (not UTF-8): try its ASCII part
    local ascii = name:gsub("[\128-\255]", "?")
    if ascii == name or not core.publish(tr, rec.parent, addr, #code, ascii, line_file(info),
                                         info.currentline) then
      failed_names = failed_names + (ascii == name and 0 or 1)
      return
    end
    name = ascii
  end
  live[tr] = { parent = rec.parent, name = name, source = info.source, line = info.linedefined }
  protos[tr] = info.proto
end

local function on_trace(what, tr, func, pc, parent, exitno)
  local t0 = now()
  events = events + 1
  if what == "start" then
    -- a stitched trace (exit -1) is a root trace entered from the interpreter
    local side = parent and exitno and exitno >= 0
    started[tr] = { func = func, pc = pc, parent = side and parent or 0 }
  elseif what == "stop" then
    local rec = started[tr]
    started[tr] = nil
    sweep()
    if rec then publish(tr, rec) end
  elseif what == "abort" then
    started[tr] = nil
  elseif what == "flush" then
    core.unpublish_all()
    live, started = {}, {}
    protos = setmetatable({}, { __mode = "v" })
  end
  local dt = now() - t0
  handler_ns = handler_ns + dt
  if dt > handler_ns_max then handler_ns_max = dt end
end

-- ---- flushes of single traces and functions ------------------------------------

local function root_of(tr)
  local t = live[tr]
  while t and t.parent ~= 0 do
    tr = t.parent
    t = live[tr]
  end
  return tr
end

-- Kill the root traces `is_root_dead` picks, and every side trace of theirs.
local function kill_roots(is_root_dead)
  local dead = {}
  for tr, t in pairs(live) do
    if t.parent == 0 and is_root_dead(tr, t) then dead[tr] = true end
  end
  for tr in pairs(live) do
    if dead[root_of(tr)] then dead[tr] = true end
  end
  kill(dead)
end

-- What jit.flush(x, all) and jit.off(x, all) flush beside everything
-- (lib_jit.c setjitmode, lj_dispatch.c luaJIT_setmode): trace x and its
-- side traces; or the traces of function x (`all` nil), of x and the
-- functions defined inside it (true), of those inside it only (false).
local function killed_by(x, all)
  if type(x) == "number" then
    kill_roots(function(tr) return tr == x end)
  elseif type(x) == "function" then
    local fi = funcinfo(x)
    if not fi.proto then return end -- a C function has no traces
    local own, inner = all ~= false, all ~= nil
    kill_roots(function(tr, t)
      if protos[tr] == fi.proto then return own end
      return inner and t.source == fi.source and t.line >= fi.linedefined and t.line <= fi.lastlinedefined
    end)
  end
end

-- x == true means the function that calls jit.flush or jit.off.  The
-- traces are unpublished first and the original is tail-called, so that
-- LuaJIT still sees that function as its caller.
local jit_flush, jit_off = jit.flush, jit.off
local function target(x)
  if x ~= true then return x end
  local caller = debug.getinfo(3, "f")
  return caller and caller.func
end
function jit.flush(x, all, ...)
  if x ~= nil then killed_by(target(x), all) end
  return jit_flush(x, all, ...)
end
function jit.off(x, all, ...)
  if x ~= nil then killed_by(target(x), all) end
  return jit_off(x, all, ...)
end

-- ---- the module ----------------------------------------------------------------

-- Counts and times: the C side's (publishes, publish_ns...) and the
-- handler's own (handler_ns: all of the event handler, names included).
function M.stats()
  local s = core.stats()
  s.handler_ns, s.handler_ns_max, s.events, s.failed_names = handler_ns, handler_ns_max, events, failed_names
  return s
end

-- The names of the traces published now, by trace number.
function M.traces()
  local t = {}
  for tr, rec in pairs(live) do t[tr] = rec.name end
  return t
end

M.channels = core.channels
M.trace_name = function(tr, func, pc) return trace_name(tr, funcinfo(func, pc)) end

-- LuaJIT keeps one handler per event (lib_jit.c jit_attach stores it in
-- the registry's _VMEVENTS table, keyed by the event name's hash): a later
-- jit.attach(fn, "trace") -- jit.v, jit.dump -- would silently replace
-- ours.  So the module keeps the slot and runs the handler a program
-- attaches there after its own, one at a time as LuaJIT would; the one
-- attached before the module loaded (luajit -jv -l jitunwind) is kept too.
local other -- the program's own "trace" handler, if any
local function dispatch(...)
  on_trace(...)
  if other then return other(...) end
end

local function previous_trace_handler(attach_ours)
  local before = {}
  for k, v in pairs(debug.getregistry()._VMEVENTS or {}) do before[k] = v end
  attach_ours()
  for k, v in pairs(debug.getregistry()._VMEVENTS) do
    if v == dispatch then return before[k] end
  end
end

local jit_attach = jit.attach
function jit.attach(fn, event, ...)
  if event == "trace" and type(fn) == "function" then
    other = fn
    return
  end
  if event == nil and fn == other then other = nil end
  return jit_attach(fn, event, ...)
end

-- Traces compiled before the module was loaded were never seen starting:
-- flush them once, so that every trace is compiled again under our eyes.
jit_flush()
other = previous_trace_handler(function() jit_attach(dispatch, "trace") end)

return M
