`default_nettype none
// The iCE40 I/O cell reduced to its ports and its input, for `make
// fpga-lint` of the board top only: synthesis and place-and-route use the
// real one (yosys's ice40/cells_sim.v describes all of it).
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDPARAM */
module SB_IO #(
	parameter [5:0] PIN_TYPE = 6'b000000,
	parameter [0:0] PULLUP = 1'b0
) (
	inout  wire PACKAGE_PIN,
	input  wire INPUT_CLK,
	input  wire OUTPUT_CLK,
	input  wire OUTPUT_ENABLE,
	input  wire D_OUT_0,
	output wire D_IN_0
);
	// the pin as the cell drives it (registers left out) and as it reads
	generate
		if (PIN_TYPE[5:4] == 2'b01)
			assign PACKAGE_PIN = D_OUT_0;
		else if (PIN_TYPE[5:4] != 2'b00)
			assign PACKAGE_PIN = OUTPUT_ENABLE ? D_OUT_0 : 1'bz;
	endgenerate
	assign D_IN_0 = PACKAGE_PIN;
endmodule
/* verilator lint_on UNUSEDPARAM */
/* verilator lint_on UNDRIVEN */
/* verilator lint_on UNUSEDSIGNAL */
