# The capture board's gateware (fpga/, docs/fpga.md). Included by the top
# Makefile, whose $(BUILD), $(Q) and library rules it uses.
#
#   make fpga-lint    verilator --lint-only -Wall: the RTL
#

FPGA_RTL = $(sort $(wildcard fpga/rtl/*.v))

fpga-lint:
	$(Q)verilator --lint-only -Wall --top-module bach_core $(FPGA_RTL)
	@echo "fpga-lint: clean"

.PHONY: fpga-lint
