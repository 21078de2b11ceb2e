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

-- guest_frames: publish the Lua functions a trace inlined (false: only
-- the trace, as before; for measuring what they cost).
local M = { version = "0.1", guest_frames = os.getenv("JITUNWIND_LUA_GUEST_FRAMES") ~= "0" }
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

-- ---- guest frames ---------------------------------------------------------------
-- The Lua functions a trace inlined, over the machine code where it runs
-- through them, from its snapshots (lj_snap.c): snapshot n records the
-- frames of the Lua stack where exit n resumes the interpreter, and the
-- guards of exit n are branches to jit.util.traceexitstub(n)
-- (lj_asm_x86.h asm_guardcc).  The code up to a guard is given its
-- snapshot's frames; the code after the last guard, the trace's own.

local bit = require "bit"
local band, rshift = bit.band, bit.rshift
local tracesnap, tracek, traceinfo, funcbc = jutil.tracesnap, jutil.tracek, jutil.traceinfo, jutil.funcbc
local traceexitstub = jutil.traceexitstub
local REF_BIAS, SNAP_FRAME, SNAP_CONT = 0x8000, 0x10000, 0x20000 -- lj_jit.h
-- lj_frame.h: the low two bits of a frame's link are its type; a Lua
-- frame's link is its return pc (bytecode is 4-aligned), a vararg frame's
-- the distance to the frame of the same call below it
local FRAME_TYPE, FRAME_LUA, FRAME_VARG = 4, 0, 3
local u64 = ffi.new("union { double d; uint64_t u; }")

-- The bytecode position of the call that returns to `retpc` in `func`:
-- the position whose next instruction is at retpc, found by matching
-- func's bytecode (jit.util.funcbc) against the memory before retpc.  nil
-- when it does not match (then the frame is not func's).
local function call_pos(func, retpc, nbc)
  local p = ffi.cast("const int32_t *", retpc)
  local first = funcbc(func, 0)
  for pos = 1, nbc - 1 do
    if p[-pos] == first then
      local ok = true
      for k = 1, pos - 1 do
        if p[-pos + k] ~= funcbc(func, k) then ok = false; break end
      end
      if ok then return pos - 1 end
    end
  end
end

local function_info = {} -- func -> {name, file, line, nbc}, weak keys
setmetatable(function_info, { __mode = "k" })
local function lua_function(func)
  local fi = function_info[func]
  if fi then return fi end
  local info = funcinfo(func)
  if not info.proto or info.source:sub(1, 1) ~= "@" then return nil end
  local name = trace_name(0, info):gsub(" %(trace 0%)$", "")
  fi = { name = name:gsub(":%d+$", ":" .. info.linedefined), file = info.source:sub(2),
         line = info.linedefined, nbc = info.bytecodes }
  function_info[func] = fi
  return fi
end

-- Snapshot sn's frames above the trace's own: {{func, call_line}, ...},
-- outermost first, each with the line of the call in the one below; the
-- chain stops at the first frame it cannot read (a continuation, a C
-- function, a chunk that is no file, a link that is not the caller's).
local function snapshot_frames(tr, sn, root)
  local snap = tracesnap(tr, sn)
  if not snap then return nil end
  local at = {}
  for i = 2, #snap - 1 do at[rshift(snap[i], 24)] = snap[i] end
  local frames, caller = {}, root
  for s = 2, snap[1] - 1 do
    local e = at[s]
    if e and band(e, SNAP_CONT) ~= 0 then break end
    -- LJ_FR2: a frame is its function in slot s-1 and its link in slot s
    -- (flagged as a frame; some versions flag the function too)
    local link = e and band(e, SNAP_FRAME) ~= 0 and band(e, 0xffff) < REF_BIAS
                 and tracek(tr, band(e, 0xffff) - REF_BIAS)
    if link and type(link) ~= "function" then
      local f, fe = nil, at[s - 1]
      if fe and band(fe, 0xffff) < REF_BIAS then f = tracek(tr, band(fe, 0xffff) - REF_BIAS) end
      if type(f) ~= "function" or type(link) ~= "number" then break end
      u64.d = link
      local ftype = tonumber(u64.u % FRAME_TYPE)
      if ftype ~= FRAME_LUA then
        if ftype ~= FRAME_VARG then break end
      else
        local cf, fi = lua_function(caller), lua_function(f)
        local pos = cf and fi and call_pos(caller, u64.u, cf.nbc)
        if not pos then break end
        frames[#frames + 1] = { func = f, info = fi, call_line = funcinfo(caller, pos).currentline,
                                key = tostring(f) .. "@" .. pos }
        caller = f
      end
    end
  end
  return frames
end

-- {offset, line, ...} rows and {{start, end, parent, call_line, name, file}}
-- guest frames for trace tr (code at addr, size bytes), which starts in
-- root at start_line; nil when it inlined nothing known.
local function guest_frames(tr, root, addr, size, start_line)
  local nexit = traceinfo(tr).nexit
  if nexit == 0 or not lua_function(root) then return nil end
  -- most traces inline nothing: unless a snapshot holds a frame above the
  -- trace's own, there is no code to scan
  local framed = false
  for sn = 0, nexit - 1 do
    local snap = tracesnap(tr, sn)
    if snap then
      for i = 2, #snap - 1 do
        local e = snap[i]
        if band(e, SNAP_FRAME) ~= 0 and rshift(e, 24) >= 2 then framed = true; break end
      end
    end
    if framed then break end
  end
  if not framed then return nil end
  local stubs, lo, hi = {}, math.huge, 0
  for n = 0, nexit - 1 do
    local a = traceexitstub(n)
    if a then stubs[a] = n; lo = math.min(lo, a); hi = math.max(hi, a + 1) end
  end
  local br = core.exit_branches(addr, size, lo, hi)
  if not br then return nil end
  local segs, snaps, from, deep = {}, {}, 0, false
  for i = 1, #br, 2 do
    local sn = stubs[br[i + 1]]
    if sn then
      if snaps[sn] == nil then snaps[sn] = snapshot_frames(tr, sn, root) or false end
      local fr = snaps[sn] or {}
      deep = deep or #fr > 0
      segs[#segs + 1] = { from = from, to = br[i], frames = fr }
      from = br[i]
    end
  end
  if not deep then return nil end
  segs[#segs + 1] = { from = from, to = size, frames = {} }
  local rows, inlines, open = { 0, start_line }, {}, {} -- open: the inlines covering `from`
  local lines = { start_line } -- the line known last in each open frame, the trace's own first
  for _, seg in ipairs(segs) do
    if seg.to > seg.from then
      local keep = 0
      while keep < #open and keep < #seg.frames and open[keep + 1].key == seg.frames[keep + 1].key do
        keep = keep + 1
      end
      for d = #open, keep + 1, -1 do -- close: the caller was last at the call
        inlines[open[d].index][2] = seg.from
        lines[d] = open[d].call_line
        open[d], lines[d + 1] = nil, nil
      end
      for d = keep + 1, #seg.frames do
        local f = seg.frames[d]
        inlines[#inlines + 1] = { seg.from, seg.to, d > 1 and open[d - 1].index or 0, f.call_line,
                                  f.info.name, f.info.file }
        open[d] = { key = f.key, index = #inlines, call_line = f.call_line }
        lines[d] = f.call_line
        lines[d + 1] = f.info.line -- jit.util gives no pc inside it: where it starts
      end
      local line = lines[#open + 1]
      if rows[#rows - 1] == seg.from then rows[#rows] = line
      elseif rows[#rows] ~= line then rows[#rows + 1] = seg.from; rows[#rows + 1] = line end
    end
  end
  for d = 1, #open do inlines[open[d].index][2] = size end
  return rows, inlines
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
  local rows, inlines
  if M.guest_frames and line_file(info) then
    rows, inlines = guest_frames(tr, rec.func, addr, #code, info.currentline)
  end
  local ok = core.publish(tr, rec.parent, addr, #code, name, line_file(info), info.currentline, rows, inlines)
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
-- SPDX-License-Identifier: MIT
