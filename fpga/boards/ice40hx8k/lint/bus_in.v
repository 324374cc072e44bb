`default_nettype none
// bus_in as Verilator sees it in `make fpga-lint`: the input register
// without the I/O cell (Verilator will not connect an input port to the
// cell's inout pin). Synthesis uses ../bus_in.v.
module bus_in (
	input  wire clk,
	input  wire pin,
	output reg  q
);
	always @(posedge clk)
		q <= pin;
endmodule
