`default_nettype none
// bach_sync: bring a signal into the clock domain of i_clk through two
// flip-flops. For a level or a toggle; for a bus only when it is Gray
// coded (one bit changes at a time), as the FIFO pointers are.
module bach_sync #(
	parameter W = 1
) (
	input  wire         i_clk,
	input  wire [W-1:0] i_d,
	output wire [W-1:0] o_q
`ifdef FORMAL
	,
	output wire [W-1:0] f_meta	// the first stage, for the proofs
`endif
);
	reg [W-1:0] r_meta = {W{1'b0}};	// may go metastable
	reg [W-1:0] r_q = {W{1'b0}};	// settled

	always @(posedge i_clk) begin
		r_meta <= i_d;
		r_q <= r_meta;
	end
	assign o_q = r_q;
`ifdef FORMAL
	assign f_meta = r_meta;
`endif
endmodule
