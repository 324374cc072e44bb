`default_nettype none
// A bus pin, registered in its I/O cell on the CPU clock.
module bus_in (
	input  wire clk,
	input  wire pin,
	output wire q
);
	SB_IO #(.PIN_TYPE(6'b000000)) io (.PACKAGE_PIN(pin), .INPUT_CLK(clk),
		.OUTPUT_CLK(1'b0), .OUTPUT_ENABLE(1'b0), .D_OUT_0(1'b0),
		.D_IN_0(q));
endmodule
