`default_nettype none
// bach_pattern: the test patterns of docs/board-protocol.md section 6, whose
// record i is a function of i alone:
//
//   counter: address (i << 3) mod 2^32, BE# 00, control c0 (D_READ)
//   LFSR:    s_0 = 1 at START, s_(i+1) = (s_i >> 1) ^ (s_i & 1 ? 0x80200003
//            : 0); address s_i & 0xfffffff8, BE# s_i & 0xff, control c0
//
// The pattern runs on the USB clock, a record a clock, and the framer
// takes records from it directly (it never goes through the record FIFO).
// Two generators: the free one, stepped by the framer once a clock (with
// `drop`, where the records the link has no time for are lost indices;
// it runs a frame's worth of records behind the index reached, so that a
// frame only holds records already sampled), and the cursor, which the
// framer loads at the start of a frame (from the free one with `drop`; it
// simply carries on with `stall`, where the pattern waits for the link)
// and steps once per record sent.
module bach_pattern (
	input  wire        i_clk,
	input  wire        i_start,	// START: index 0
	input  wire        i_lfsr,	// 1 LFSR, 0 counter
	input  wire        i_free_step,	// the free generator takes a step
	input  wire        i_load,	// cursor := free generator
	input  wire        i_step,	// cursor: next record
	output wire [47:0] o_rec	// the cursor's record
);
	localparam [31:0] TAPS = 32'h80200003;

	reg [31:0] u_free = 32'd1;	// LFSR state, or counter index
	reg [31:0] u_cur = 32'd1;	// the same for the cursor

	function [31:0] next(input [31:0] s, input lfsr);
		next = lfsr ? ({1'b0, s[31:1]} ^ (s[0] ? TAPS : 32'd0)) :
			      s + 32'd1;
	endfunction

	always @(posedge i_clk)
		if (i_start)
			u_free <= i_lfsr ? 32'd1 : 32'd0;
		else if (i_free_step)
			u_free <= next(u_free, i_lfsr);

	always @(posedge i_clk)
		if (i_start)
			u_cur <= i_lfsr ? 32'd1 : 32'd0;
		else if (i_load)
			u_cur <= u_free;
		else if (i_step)
			u_cur <= next(u_cur, i_lfsr);

	assign o_rec = i_lfsr ? {u_cur[31:3], 3'b000, u_cur[7:0], 8'hc0} :
				{u_cur[28:0], 3'b000, 8'h00, 8'hc0};
endmodule
