# SPDX-License-Identifier: MIT
# tools.mk - the test suite's own tools (included by the top-level Makefile).
#   reaper     runs a command; fails it if it leaves processes running, and
#              lists its processes' perf maps (JU_PERF_MAP_PIDS)
#   opentrace  lists the files a command and its descendants open
# Built without sanitizers: they watch the suite, they are not under test.

TOOLS_DIR := $(BUILD)/tools
REAPER    := $(TOOLS_DIR)/reaper
OPENTRACE := $(TOOLS_DIR)/opentrace

.PHONY: test-tools
test-tools: $(REAPER) $(OPENTRACE)

$(TOOLS_DIR)/%: tests/tools/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE $(WARN) -O2 -pthread -o $@ $<
