# The capture board's gateware (fpga/, docs/fpga.md). Included by the top
# Makefile, whose $(BUILD), $(Q) and library rules it uses.
#
#   make fpga-lint    verilator --lint-only -Wall: the RTL and the board top
#   make fpga-synth   yosys and nextpnr for the iCE40HX8K-CT256; prints the
#                     Max frequency lines and fails when a clock misses its
#                     target (bus 66.67 MHz, FT2232H 60 MHz)
#
# Knobs
#   FPGA_SEED=1       nextpnr placement seed

FPGA_RTL = $(sort $(wildcard fpga/rtl/*.v))
FPGA_BOARD = fpga/boards/ice40hx8k
FPGA_BOARD_V = $(FPGA_BOARD)/top.v $(FPGA_BOARD)/bus_in.v
FPGA_OUT = $(BUILD)/fpga
FPGA_SEED ?= 1

fpga-lint:
	$(Q)verilator --lint-only -Wall --top-module bach_core $(FPGA_RTL)
	$(Q)verilator --lint-only -Wall --top-module top \
		$(FPGA_BOARD)/lint/SB_IO.v $(FPGA_BOARD)/lint/bus_in.v \
		$(FPGA_RTL) $(FPGA_BOARD)/top.v
	@echo "fpga-lint: clean"

# ---- synthesis ---------------------------------------------------------

$(FPGA_OUT)/top.json: $(FPGA_RTL) $(FPGA_BOARD_V)
	$(Q)mkdir -p $(dir $@)
	@echo '   YOSYS ' $@
	$(Q)yosys -q -l $(FPGA_OUT)/yosys.log \
		-p 'synth_ice40 -top top -json $@' $(FPGA_RTL) $(FPGA_BOARD_V)

# nextpnr exits non-zero when a clock misses its target (clocks.py)
$(FPGA_OUT)/top.asc: $(FPGA_OUT)/top.json $(FPGA_BOARD)/bach.pcf \
		     $(FPGA_BOARD)/clocks.py
	@echo '   PNR   ' $@
	$(Q)nextpnr-ice40 -q --hx8k --package ct256 --seed $(FPGA_SEED) \
		--json $< --pcf $(FPGA_BOARD)/bach.pcf \
		--pre-pack $(FPGA_BOARD)/clocks.py \
		--asc $@ -l $(FPGA_OUT)/nextpnr.log || \
		{ grep 'Max frequency' $(FPGA_OUT)/nextpnr.log; rm -f $@; exit 1; }

$(FPGA_OUT)/bach.bin: $(FPGA_OUT)/top.asc
	$(Q)icepack $< $@

# nextpnr reports each figure after placement and again after routing: the
# last ones count
fpga-synth: $(FPGA_OUT)/bach.bin
	$(Q)for r in ICESTORM_LC ICESTORM_RAM SB_IO; do \
		grep -m 1 "$$r:" $(FPGA_OUT)/nextpnr.log; done
	$(Q)grep 'Max delay .*ft_clk' $(FPGA_OUT)/nextpnr.log | \
		grep async | tail -n 2
	$(Q)grep 'Max frequency for clock' $(FPGA_OUT)/nextpnr.log | tail -n 2
	$(Q)! grep 'Max frequency for clock' $(FPGA_OUT)/nextpnr.log | \
		tail -n 2 | grep -q FAIL

.PHONY: fpga-lint fpga-synth
