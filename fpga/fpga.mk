# The capture board's gateware (fpga/, docs/fpga.md). Included by the top
# Makefile, whose $(BUILD), $(Q) and library rules it uses.
#
#   make fpga-lint    verilator --lint-only -Wall: the RTL and the board top
#   make fpga-sim     the self-checking testbench (Icarus Verilog) and the C
#                     check of its byte stream; ends with PASS. Part of
#                     make check, through tests/cli/fpga.sh
#   make fpga-synth   yosys and nextpnr for the iCE40HX8K-CT256; prints the
#                     Max frequency lines and fails when a clock misses its
#                     target (bus 66.67 MHz, FT2232H 60 MHz)
#   make fpga-formal  the properties beside the sampler, the clock-crossing
#                     FIFO, the framer, the command reader and the FT2232H
#                     adapter, proved with yosys-smtbmc and z3 (bounded,
#                     then k-induction), and their covers (each must be
#                     reached, or it fails); ends with PASS. Part of make
#                     check, through tests/cli/fpga_formal.sh (about a
#                     minute)
#   make fpga-synth-selftest
#                     fpga-synth, then its checks shown to fail on a bad
#                     design (an unregistered bus pin); run by .ci/run
#   make fpga-gatesim the netlist of synth_ice40 under the same testbench
#                     and checks (the gate scenario); ends with PASS. Run
#                     by .ci/run after make check (about three minutes)
#
# Knobs
#   FPGA_SEED=1       nextpnr placement seed
#   FPGA_SCENARIOS="bus drop offbus filter counter lfsr cmds deaf nocpu nobus"
#                     what fpga-sim runs
#   FPGA_FORMAL="sampler afifo framer cmd ft245"
#                     what fpga-formal proves
#
# fpga-sim leaves $(BUILD)/fpga/bus.vcd (the bus pins of the bus scenario,
# channels named as docs/design.md section 5) and $(BUILD)/fpga/bus.byu (the
# records they carry), for the logic-analyzer decoder's tests.

FPGA_RTL = $(sort $(wildcard fpga/rtl/*.v))
FPGA_BOARD = fpga/boards/ice40hx8k
FPGA_BOARD_V = $(FPGA_BOARD)/top.v $(FPGA_BOARD)/bus_in.v
FPGA_OUT = $(BUILD)/fpga
FPGA_SEED ?= 1
FPGA_SCENARIOS ?= bus drop offbus filter counter lfsr cmds deaf nocpu nobus
FPGA_FORMAL ?= sampler afifo framer cmd ft245

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

# The checks on nextpnr's report beside the clocks (nextpnr-ice40 0.4 has
# no input-delay constraints), in check_pnr.sh: the FT2232H's TXE# and RXF#
# reach their registers within FPGA_FT_IN_NS (16.67 ns, less the chip's
# 7.15 ns output delay and 0.5 ns of traces: docs/fpga.md section 7), and
# no bus pin reaches a bus-clock register but through its I/O cell's
# register (no <async> -> bus_clk path at all).
FPGA_FT_IN_NS ?= 9.0

fpga-synth: $(FPGA_OUT)/bach.bin
	$(Q)$(FPGA_BOARD)/check_pnr.sh $(FPGA_OUT)/nextpnr.log $(FPGA_FT_IN_NS)

# The checks shown to fail (.ci/run, after fpga-synth): the same report
# against a budget no routing meets, and a board top whose HLDA pin is a
# plain input (PIN_TYPE 000001, no input register) placed and routed
# as the real one (whether or not its clocks then meet their targets): each
# must fail, saying why.
FPGA_MUTANT = $(FPGA_OUT)/mutant

$(FPGA_MUTANT)/top.v: $(FPGA_BOARD)/top.v
	$(Q)mkdir -p $(dir $@)
	$(Q)sed 's/^\tbus_in in_hlda (.*$$/\tSB_IO #(.PIN_TYPE(6'"'"'b000001)) in_hlda (.PACKAGE_PIN(bus_hlda), .D_IN_0(c_q[0]));/' $< > $@
	$(Q)! cmp -s $< $@ || { echo "$@: the HLDA pin was not changed"; exit 1; }

$(FPGA_MUTANT)/top.asc: $(FPGA_RTL) $(FPGA_MUTANT)/top.v $(FPGA_BOARD)/bus_in.v \
		$(FPGA_BOARD)/bach.pcf $(FPGA_BOARD)/clocks.py
	@echo '   YOSYS ' $(FPGA_MUTANT)/top.json
	$(Q)yosys -q -l $(FPGA_MUTANT)/yosys.log \
		-p 'synth_ice40 -top top -json $(FPGA_MUTANT)/top.json' \
		$(FPGA_RTL) $(FPGA_MUTANT)/top.v $(FPGA_BOARD)/bus_in.v
	@echo '   PNR   ' $@
	$(Q)nextpnr-ice40 -q --hx8k --package ct256 --seed $(FPGA_SEED) \
		--json $(FPGA_MUTANT)/top.json --pcf $(FPGA_BOARD)/bach.pcf \
		--pre-pack $(FPGA_BOARD)/clocks.py \
		--asc $@ -l $(FPGA_MUTANT)/nextpnr.log || \
		{ grep -q 'Max frequency' $(FPGA_MUTANT)/nextpnr.log && touch $@; }

fpga-synth-selftest: fpga-synth $(FPGA_MUTANT)/top.asc
	$(Q)! $(FPGA_BOARD)/check_pnr.sh $(FPGA_OUT)/nextpnr.log 1.0 \
		> $(FPGA_OUT)/selftest-ft.txt
	$(Q)grep -q 'FT2232H inputs miss their budget of 1.0 ns' \
		$(FPGA_OUT)/selftest-ft.txt
	$(Q)! $(FPGA_BOARD)/check_pnr.sh $(FPGA_MUTANT)/nextpnr.log \
		$(FPGA_FT_IN_NS) > $(FPGA_MUTANT)/check.txt
	$(Q)grep -q 'a bus pin reaches a bus-clock register outside' \
		$(FPGA_MUTANT)/check.txt
	@echo "fpga-synth-selftest: PASS (a missed FT budget and an unregistered bus pin both fail)"

# ---- simulation ----------------------------------------------------------

FPGA_BENCH_V = fpga/bench/tb_bach.v fpga/bench/pentium_bus.v

$(FPGA_OUT)/tb.vvp: $(FPGA_BENCH_V) $(FPGA_RTL)
	$(Q)mkdir -p $(dir $@)
	@echo '   IVERILOG' $@
	$(Q)iverilog -g2005 -o $@ -s tb_bach $(FPGA_BENCH_V) $(FPGA_RTL)

$(FPGA_OUT)/tbgen $(FPGA_OUT)/check_stream: $(FPGA_OUT)/%: fpga/bench/%.c \
		$(BUILD)/libbach.a
	$(Q)mkdir -p $(dir $@)
	$(QUIET_LINK)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		$(BUILD)/libbach.a $(LIBS)

# the workload the bus cycles come from
$(FPGA_OUT)/gen.byu: $(BUILD)/bin/bach
	$(Q)mkdir -p $(dir $@)
	$(Q)$(BUILD)/bin/bach gen --records 5000 --seed 7 -o $@

fpga-sim: $(FPGA_OUT)/tb.vvp $(FPGA_OUT)/tbgen $(FPGA_OUT)/check_stream \
	  $(FPGA_OUT)/gen.byu
	$(Q)fpga/bench/run.sh $(FPGA_OUT) $(FPGA_OUT)/gen.byu $(FPGA_OUT)/tb.vvp \
		$(FPGA_OUT)/tbgen $(FPGA_OUT)/check_stream $(FPGA_SCENARIOS)

# ---- gate-level simulation -------------------------------------------------
# The core as synth_ice40 maps it (LUTs, carries, flip-flops, block RAM),
# with the testbench's parameters, simulated with yosys's models of the
# iCE40 cells under the same testbench and check_stream: the gate scenario,
# the bus scenario made short (every corner case, 300 records), since the
# netlist simulates some 80 times slower than the RTL.

# yosys's own models of the iCE40 cells (yosys-config is in yosys-dev, which
# the build does not need: Debian's path otherwise)
FPGA_CELLS ?= $(shell yosys-config --datdir 2>/dev/null || \
		echo /usr/share/yosys)/ice40/cells_sim.v
FPGA_GATE_SCENARIOS ?= gate

$(FPGA_OUT)/gate/core.v: $(FPGA_RTL)
	$(Q)mkdir -p $(dir $@)
	@echo '   YOSYS ' $@
	$(Q)yosys -q -l $(FPGA_OUT)/gate/yosys.log \
		-p 'chparam -set METER_RES 10000 -set SERIAL "SIM0" -set NAME "bach capture board (simulation)" bach_core' \
		-p 'synth_ice40 -top bach_core' \
		-p 'write_verilog -noattr $@' $(FPGA_RTL)

$(FPGA_OUT)/gate/tb.vvp: $(FPGA_BENCH_V) $(FPGA_OUT)/gate/core.v
	@echo '   IVERILOG' $@
	$(Q)iverilog -g2005 -DGATE -DNO_ICE40_DEFAULT_ASSIGNMENTS -o $@ \
		-s tb_bach $(FPGA_BENCH_V) $(FPGA_OUT)/gate/core.v $(FPGA_CELLS)

fpga-gatesim: $(FPGA_OUT)/gate/tb.vvp $(FPGA_OUT)/tbgen \
	      $(FPGA_OUT)/check_stream $(FPGA_OUT)/gen.byu
	$(Q)fpga/bench/run.sh $(FPGA_OUT)/gate $(FPGA_OUT)/gen.byu \
		$(FPGA_OUT)/gate/tb.vvp $(FPGA_OUT)/tbgen \
		$(FPGA_OUT)/check_stream $(FPGA_GATE_SCENARIOS)

# ---- formal proofs ---------------------------------------------------------

fpga-formal:
	$(Q)fpga/bench/formal/run.sh $(FPGA_OUT) $(FPGA_FORMAL)

.PHONY: fpga-lint fpga-sim fpga-synth fpga-synth-selftest fpga-formal fpga-gatesim
